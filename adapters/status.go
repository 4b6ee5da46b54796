package adapters

// Status is the outcome of one database operation. The names and their
// order follow YCSB's site.ycsb.Status so that `Return=<NAME>` lines match.
type Status uint8

const (
	OK Status = iota
	Error
	NotFound
	NotImplemented
	UnexpectedState
	BadRequest
	Forbidden
	ServiceUnavailable
	BatchedOK
	// Cancelled is ycsbctl's own: the operation was cut short by an abort
	// (the operator's second Ctrl-C), so neither its result nor its
	// latency says anything about the database.
	Cancelled
	// NumStatuses is the number of distinct statuses; arrays indexed by
	// Status use it as their length.
	NumStatuses
)

var statusNames = [NumStatuses]string{
	OK:                 "OK",
	Error:              "ERROR",
	NotFound:           "NOT_FOUND",
	NotImplemented:     "NOT_IMPLEMENTED",
	UnexpectedState:    "UNEXPECTED_STATE",
	BadRequest:         "BAD_REQUEST",
	Forbidden:          "FORBIDDEN",
	ServiceUnavailable: "SERVICE_UNAVAILABLE",
	BatchedOK:          "BATCHED_OK",
	Cancelled:          "CANCELLED",
}

// String returns YCSB's name for the status (OK, ERROR, NOT_FOUND, ...).
func (s Status) String() string {
	if s < NumStatuses {
		return statusNames[s]
	}
	return "UNKNOWN"
}

// IsOK reports whether the status counts as a success (OK or BATCHED_OK),
// as YCSB's Status.isOk does.
func (s Status) IsOK() bool { return s == OK || s == BatchedOK }

// ParseStatus maps a YCSB status name back to a Status.
func ParseStatus(name string) (Status, bool) {
	for i, n := range statusNames {
		if n == name {
			return Status(i), true
		}
	}
	return 0, false
}
