// Package exitcode defines the process exit codes of ycsbctl. They are part
// of the command-line contract: scripts and CI pipelines branch on them, so
// values never change meaning once released.
package exitcode

import (
	"errors"
	"fmt"
)

// Code is a process exit status.
type Code int

// The codes, in the one table that `ycsbctl --help`, `ycsbctl help
// exit-codes` and docs/exit-codes.md render (Table). Adding a code is
// adding a row here: name it in a few words and say in one line when a
// process exits with it.
var (
	OK = define(0, "ok", "the run completed (a distributed run that continued without a lost agent is marked partial in run.json)")
	// Failure is any error not covered below.
	Failure = define(1, "failure", "an error not covered below: an agent unreachable or failing to prepare, the database not opened, results that could not be written")
	// InvalidConfig: nothing touched a database or an agent.
	InvalidConfig = define(2, "invalid configuration", "the command line or properties were refused before anything touched a database or an agent, a results directory another live process owns included; the message names the flag or property, the value and what was expected (or the owner's PID and command)")
	AgentLost     = define(3, "agent lost", "an agent stopped answering, or left the run (stopped on its host), and the run was stopped (--on-agent-loss=abort)")
	// Aborted: operations in flight were cancelled (counted as CANCELLED).
	Aborted  = define(4, "aborted by operator", "aborted: a second SIGINT/SIGTERM, or calls still in flight when ycsbctl.stopgrace ran out (counted as CANCELLED)")
	DBErrors = define(5, "database errors above threshold", "the run finished but more operations failed than ycsbctl.maxerrorrate allows")
	// Stopped: every operation in flight finished and was measured; the
	// results are a complete measurement of a shorter run.
	Stopped = define(6, "stopped by operator", "stopped gracefully before its end (one SIGINT/SIGTERM, q in the live view, stdout closed); the results measure the shorter run")
)

// Info is one row of the table.
type Info struct {
	Code Code
	// Name is the code's name in logs and run.json ("agent lost").
	Name string
	// Meaning says when a process exits with the code.
	Meaning string
}

var table []Info

// define adds a row; codes are defined once, in order.
func define(c Code, name, meaning string) Code {
	for _, r := range table {
		if r.Code == c || r.Name == name {
			panic(fmt.Sprintf("exitcode: %d %q defined twice", c, name))
		}
	}
	table = append(table, Info{Code: c, Name: name, Meaning: meaning})
	return c
}

// Table returns every code in order.
func Table() []Info { return append([]Info(nil), table...) }

// String names the code for logs and run.json.
func (c Code) String() string {
	for _, r := range table {
		if r.Code == c {
			return r.Name
		}
	}
	return "unknown"
}

// ByOperator reports whether the run ended because it was told to stop
// (gracefully or not), rather than by its own end or a failure.
func (c Code) ByOperator() bool { return c == Stopped || c == Aborted }

// Error pairs an exit code with the error that caused it, so that code
// several calls deep can decide the exit status and the CLI only unwraps.
type Error struct {
	Code Code
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Wrap attaches c to err; nil stays nil.
func Wrap(c Code, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: c, Err: err}
}

// Coder is implemented by errors that know their exit code, such as a
// rejected property (InvalidConfig) or an Error.
type Coder interface {
	ExitCode() Code
}

// ExitCode returns e's code.
func (e *Error) ExitCode() Code { return e.Code }

// Of returns the exit code an error carries: OK for nil, the code of the
// first error in its chain that knows one, Failure otherwise.
func Of(err error) Code {
	if err == nil {
		return OK
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return Failure
}

// WithCodeIfNone attaches c unless err already carries a code (a code set
// deep down is never replaced by a more general one further up).
func WithCodeIfNone(c Code, err error) error {
	if err == nil {
		return nil
	}
	var cd Coder
	if errors.As(err, &cd) {
		return err
	}
	return &Error{Code: c, Err: err}
}
