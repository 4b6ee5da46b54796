//go:build !unix

package environ

import "errors"

func fdLimit() (uint64, error) { return 0, errors.New("not available on this system") }
