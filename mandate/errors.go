package mandate

import "errors"

// Sentinel errors callers branch on.
var (
	// ErrUnknownJob is returned for a job the store has never seen.
	ErrUnknownJob = errors.New("unknown job")
	// ErrNoPending is returned by Approve when the job has no pending version.
	ErrNoPending = errors.New("no pending mandate version")
	// ErrUnknownVersion is returned for a version number the job does not have.
	ErrUnknownVersion = errors.New("unknown mandate version")
	// ErrUnknownDrift is returned for a drift id the job does not have.
	ErrUnknownDrift = errors.New("unknown drift record")
	// ErrNothingToUndo is returned by Undo when the job is already in
	// observe mode with no mandate.
	ErrNothingToUndo = errors.New("nothing to undo: the job is in observe mode with no mandate")
	// ErrTampered is returned when a stored mandate text no longer hashes to
	// the value recorded when it was approved.
	ErrTampered = errors.New("mandate text does not match its approved SHA-256")
	// ErrInvalidMandate wraps every problem found while loading mandate YAML.
	ErrInvalidMandate = errors.New("invalid mandate")
	// ErrNoObservations is returned by Compile when a job has nothing recorded.
	ErrNoObservations = errors.New("no observed calls to compile")
	// ErrNotWidenable is returned by Widen for a drift record that no
	// mandate rule can cover (for example a run whose mode is unknown).
	ErrNotWidenable = errors.New("drift record cannot be covered by widening")
)

// More sentinels of the review commands.
var (
	// ErrNoReason is returned when resolving or dismissing drift without a
	// reason.
	ErrNoReason = errors.New("a reason is required")
	// ErrDriftClosed is returned for a drift record already widened,
	// resolved or dismissed.
	ErrDriftClosed = errors.New("drift record is closed")
	// ErrSHAMismatch is returned by approval when the version's SHA-256
	// does not start with the prefix the reviewer gave: the version is not
	// the one they reviewed.
	ErrSHAMismatch = errors.New("the version's SHA-256 does not match the reviewed hash")
	// ErrNotReapprovable is returned for a version that was never approved
	// and is no longer pending (superseded by a newer one, or discarded).
	ErrNotReapprovable = errors.New("version is neither pending nor previously approved")
)
