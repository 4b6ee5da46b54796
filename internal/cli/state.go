// Package cli is ycsbctl's command line. Every command reads its inputs and
// writes its outputs through a GlobalState, never the process globals, so
// whole commands run inside tests with captured output, a fake clock and
// synthetic signals (k6's pattern).
package cli

import (
	"context"
	"io"
	"os"
	"os/signal"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// GlobalState is everything a command may touch of the outside world.
type GlobalState struct {
	Ctx    context.Context
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Clock  clock.Clock
	// IsTerminal reports whether stdout is an interactive terminal.
	IsTerminal bool
	// ReadFile reads -P files and other inputs (properties.ReadFile in a
	// real process: bounded, text only).
	ReadFile func(string) ([]byte, error)
	// Banner is a line a command that runs others (a suite running its
	// steps) has the live view show above each run's own view.
	Banner string
	// SignalNotify and SignalStop are signal.Notify and signal.Stop.
	SignalNotify func(c chan<- os.Signal, sig ...os.Signal)
	SignalStop   func(c chan<- os.Signal)
	// RaiseSignal gives a signal its default action (the process ends as
	// if ycsbctl had never caught it): what a SIGINT or SIGTERM that no
	// command listens for does before any did (signalBackstop). Nil (in
	// tests): no backstop.
	RaiseSignal func(os.Signal)
	// OutputClosed reports whether the reader of stdout or stderr has gone
	// (a closed pipe or socket); nil when it cannot tell.
	OutputClosed func() bool
}

// NewGlobalState returns the real process state.
func NewGlobalState() *GlobalState {
	term := false
	if fi, err := os.Stdout.Stat(); err == nil {
		term = fi.Mode()&os.ModeCharDevice != 0
	}
	return &GlobalState{
		Ctx:          context.Background(),
		Args:         os.Args[1:],
		Stdin:        os.Stdin,
		Stdout:       os.Stdout,
		Stderr:       os.Stderr,
		Getenv:       os.Getenv,
		Clock:        clock.NewReal(),
		IsTerminal:   term,
		ReadFile:     properties.ReadFile,
		SignalNotify: signal.Notify,
		SignalStop:   signal.Stop,
		RaiseSignal:  raiseDefault,
		OutputClosed: outputClosed,
	}
}
