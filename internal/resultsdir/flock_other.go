//go:build !unix

package resultsdir

import (
	"errors"
	"io/fs"
	"os"
)

// Without flock(2) no directory can be owned: refusing is honest, a lock
// that locks nothing would not be.
var errNoFlock = errors.New("results directories need flock(2), which this system lacks")

func lockExclusive(*os.File) error { return errNoFlock }
func lockShared(*os.File) error    { return errNoFlock }
func alive(int) bool               { return false }
func statKey(fs.FileInfo) dirKey   { return dirKey{} }
