//go:build !unix

package cli

// outputClosed cannot tell on this platform.
func outputClosed() bool { return false }
