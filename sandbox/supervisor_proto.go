package sandbox

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The session supervisor and its host speak length-prefixed JSON frames
// over a private socketpair: a 4-byte big-endian length, then that many
// bytes of one JSON object. Frames from the supervisor are untrusted (the
// supervisor runs inside the sandbox, next to hostile code): the host
// bounds their size, rejects unknown fields and validates every value
// before acting on it (see checkReply).

// maxFrame bounds one frame in either direction (but the pool socket's
// frames from the daemon to its client, poolResultFrame). Output chunks
// are at most outputChunk bytes (base64 in JSON grows them by a third).
const (
	maxFrame    = 128 << 10
	outputChunk = 32 << 10
)

// errFrameTooLarge: a peer announced a frame over maxFrame.
var errFrameTooLarge = errors.New("frame too large")

// Request operations (host → supervisor).
const (
	opExec   = "exec"   // start a command
	opStdin  = "stdin"  // bytes for a command's stdin (or pty)
	opEOF    = "eof"    // close a command's stdin
	opSignal = "signal" // signal a command's process group
	opResize = "resize" // set a pty command's window size
)

// Reply operations (supervisor → host).
const (
	opReady  = "ready"  // the supervisor is up
	opOutput = "output" // a chunk of a command's stdout or stderr
	opExit   = "exit"   // a command finished (no frames for it follow)
	// opStarted: a background command's program was executed; the exit
	// frame (with its start error) comes instead when it could not be.
	opStarted = "started"
)

// request is a host → supervisor frame.
type request struct {
	Op string `json:"op"`
	ID uint64 `json:"id"`
	// exec
	Args       []string `json:"args,omitempty"`
	Shell      string   `json:"shell,omitempty"`
	TimeoutMS  int64    `json:"timeout_ms,omitempty"`
	GraceMS    int64    `json:"grace_ms,omitempty"`
	OutputMax  int64    `json:"output_max,omitempty"`
	Persist    bool     `json:"persist,omitempty"`
	PTY        bool     `json:"pty,omitempty"`
	HasStdin   bool     `json:"has_stdin,omitempty"`
	Background bool     `json:"background,omitempty"`
	Env        []string `json:"env,omitempty"` // added to the session's environment
	// stdin
	Data []byte `json:"data,omitempty"`
	// signal
	Signal int `json:"signal,omitempty"`
	// exec with PTY, resize
	Rows uint16 `json:"rows,omitempty"`
	Cols uint16 `json:"cols,omitempty"`
}

// reply is a supervisor → host frame.
type reply struct {
	Op string `json:"op"`
	ID uint64 `json:"id,omitempty"`
	// output: Stream 1 is stdout (and a pty), 2 is stderr.
	Stream int    `json:"stream,omitempty"`
	Data   []byte `json:"data,omitempty"`
	// exit
	ExitCode   int    `json:"exit_code,omitempty"`
	Signal     int    `json:"signal,omitempty"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	StartError string `json:"start_error,omitempty"` // "notfound", "noexec" or "other"
	CPUMicros  int64  `json:"cpu_us,omitempty"`
	MaxRSSKiB  int64  `json:"max_rss_kib,omitempty"`
	Message    string `json:"message,omitempty"`
}

// Start errors a supervisor may report.
const (
	startNotFound = "notfound"
	startNoExec   = "noexec"
	startOther    = "other"
)

// writeFrame writes v as one frame. Callers serialise writes.
func writeFrame(w io.Writer, v any) error {
	return writeFrameMax(w, v, maxFrame)
}

// writeFrameMax is writeFrame for a channel whose frames may reach limit
// bytes (the pool socket's results, poolResultFrame).
func writeFrameMax(w io.Writer, v any, limit int) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding frame: %w", err)
	}
	if len(b) > limit {
		return fmt.Errorf("encoding frame: %w (%d bytes)", errFrameTooLarge, len(b))
	}
	return writeEncodedFrame(w, b)
}

// writeEncodedFrame writes b, a frame's JSON body already checked against
// its channel's limit, as one frame.
func writeEncodedFrame(w io.Writer, b []byte) error {
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	_, err := w.Write(buf)
	return err
}

// readFrame reads one frame into v, rejecting frames over maxFrame and
// JSON with unknown fields or trailing data. buf is reused when large enough.
func readFrame(r io.Reader, buf []byte, v any) ([]byte, error) {
	return readFrameMax(r, buf, v, maxFrame)
}

// readFrameMax is readFrame for a channel whose frames may reach limit
// bytes (writeFrameMax).
func readFrameMax(r io.Reader, buf []byte, v any, limit uint32) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return buf, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > limit {
		return buf, fmt.Errorf("reading frame: %w (%d bytes)", errFrameTooLarge, n)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return buf, fmt.Errorf("reading frame: %w", err)
	}
	if err := decodeStrict(buf, v); err != nil {
		return buf, fmt.Errorf("decoding frame: %w", err)
	}
	return buf, nil
}

func decodeStrict(b []byte, v any) error {
	// A fresh value per frame: a field left over from the previous
	// frame must never leak into this one.
	switch p := v.(type) {
	case *reply:
		*p = reply{}
	case *request:
		*p = request{}
	case *poolFrame:
		*p = poolFrame{}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after JSON object")
	}
	return nil
}

// checkReply validates an untrusted supervisor frame's values; it says
// nothing about whether the id is one the host is waiting for.
func checkReply(r *reply) error {
	switch r.Op {
	case opReady:
		return nil
	case opStarted:
		if r.ID == 0 {
			return errors.New("started frame without an id")
		}
		return nil
	case opOutput:
		if r.ID == 0 {
			return errors.New("output frame without an id")
		}
		if r.Stream != 1 && r.Stream != 2 {
			return fmt.Errorf("output frame with stream %d", r.Stream)
		}
		if len(r.Data) == 0 || len(r.Data) > outputChunk {
			return fmt.Errorf("output frame with %d bytes", len(r.Data))
		}
		return nil
	case opExit:
		if r.ID == 0 {
			return errors.New("exit frame without an id")
		}
		if r.ExitCode < 0 || r.ExitCode > 255 {
			return fmt.Errorf("exit frame with exit code %d", r.ExitCode)
		}
		if r.Signal < 0 || r.Signal > 64 {
			return fmt.Errorf("exit frame with signal %d", r.Signal)
		}
		switch r.StartError {
		case "", startNotFound, startNoExec, startOther:
		default:
			return fmt.Errorf("exit frame with start error %q", r.StartError)
		}
		if r.CPUMicros < 0 || r.MaxRSSKiB < 0 || len(r.Message) > 4096 {
			return errors.New("exit frame with out-of-range usage")
		}
		return nil
	}
	return fmt.Errorf("unknown frame op %q", r.Op)
}
