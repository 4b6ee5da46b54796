// Command ycsbctl is a distributed, YCSB-compatible benchmark for NoSQL
// databases. See `ycsbctl --help`.
package main

import (
	"os"

	"github.com/ycsbctl/ycsbctl/cli"
)

func main() {
	os.Exit(cli.Execute(cli.NewGlobalState()))
}
