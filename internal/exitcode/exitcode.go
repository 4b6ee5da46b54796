// Package exitcode defines the process exit codes of ycsbctl. They are part
// of the command-line contract: scripts and CI pipelines branch on them, so
// values never change meaning once released.
package exitcode

import "errors"

// Code is a process exit status.
type Code int

const (
	// OK: the benchmark ran to completion (for a distributed run with
	// --on-agent-loss=continue this includes runs whose results are
	// marked partial; run.json says which).
	OK Code = 0
	// Failure: any error not covered below (an agent could not be
	// reached or failed to prepare, I/O errors writing results, ...).
	Failure Code = 1
	// InvalidConfig: the command line or properties were rejected before
	// anything touched a database or an agent.
	InvalidConfig Code = 2
	// AgentLost: an agent stopped answering during a distributed run and
	// the run was stopped (--on-agent-loss=abort).
	AgentLost Code = 3
	// Aborted: the run was cut short with operations in flight cancelled
	// (counted as CANCELLED): a second SIGINT/SIGTERM, or a graceful stop
	// whose calls did not return within ycsbctl.stopgrace.
	Aborted Code = 4
	// DBErrors: the run finished but the share of failed database
	// operations exceeded the configured threshold.
	DBErrors Code = 5
	// Stopped: the run was stopped gracefully before its end (one
	// SIGINT/SIGTERM, q in the live view, or its stdout closed): every
	// operation in flight finished and was measured, and the results are
	// a complete measurement of a shorter run.
	Stopped Code = 6
)

// Doc describes one exit code, for --help and the documentation.
type Doc struct {
	Code Code
	// Name is the short name run.json records as exit_reason.
	Name string
	// Line says in one line when the code is returned.
	Line string
}

// Table lists every exit code in order; it is the one place they are
// described.
var Table = []Doc{
	{OK, "ok", "the run completed (a distributed run that continued without a lost agent is marked partial in run.json)"},
	{Failure, "failure", "an error not covered below: an agent unreachable or failing to prepare, results that could not be written"},
	{InvalidConfig, "invalid configuration", "the command line or properties were refused before anything touched a database or an agent"},
	{AgentLost, "agent lost", "an agent stopped answering and the run was stopped (--on-agent-loss=abort)"},
	{Aborted, "aborted by operator", "aborted: a second SIGINT/SIGTERM, or calls still in flight when ycsbctl.stopgrace ran out (counted as CANCELLED)"},
	{DBErrors, "database errors above threshold", "the run finished but more operations failed than ycsbctl.maxerrorrate allows"},
	{Stopped, "stopped by operator", "stopped gracefully before its end (one SIGINT/SIGTERM, q in the live view, stdout closed); the results measure the shorter run"},
}

// String names the code for logs and run.json.
func (c Code) String() string {
	for _, d := range Table {
		if d.Code == c {
			return d.Name
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
