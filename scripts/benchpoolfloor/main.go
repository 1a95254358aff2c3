// Command benchpoolfloor measures the floor of a thin `tether run` client
// next to a daemon's pool (issue 22): a small pure-Go process that does
// nothing but the pool socket's exchange, with none of tether's start-up,
// configuration, approval or placement. It is a developer tool, not part
// of tether, and never a substitute for the `tether run (pooled)` row.
//
// Usage:
//
//	benchpoolfloor record FRAME TETHER run [FLAG...] -- PROGRAM [ARG...]
//	benchpoolfloor replay STATE_ROOT FRAME
//
// record runs the tether command with TETHER_STATE_ROOT set to a private
// temporary state root whose pool socket is served here: it saves the
// command's "run" frame (its spec, policy digest and command) to FRAME and
// answers "nomatch", so the command builds its own sandbox and runs there
// (give it the --cgroup-prefix of the daemon to replay against; needs what
// tether run needs). replay sends FRAME to the pool socket of STATE_ROOT,
// sends "go" once a sandbox is taken, copies the command's output and
// exits with its status: 124 when no sandbox was taken, 125 when the
// exchange failed.
package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
)

// maxFrame bounds a frame, as the pool socket does (sandbox.maxFrame).
const maxFrame = 128 << 10

// frame is the part of a pool frame this tool reads.
type frame struct {
	Op     string `json:"op"`
	Stream int    `json:"stream"`
	Data   []byte `json:"data"`
	Result *struct {
		ExitCode int `json:"exit_code"`
	} `json:"result"`
	Error  string `json:"error"`
	Reason string `json:"reason"`
}

func main() {
	var err error
	code := 2
	switch {
	case len(os.Args) >= 4 && os.Args[1] == "record":
		if err = record(os.Args[2], os.Args[3:]); err == nil {
			code = 0
		} else {
			code = 1
		}
	case len(os.Args) == 4 && os.Args[1] == "replay":
		code, err = replay(os.Args[2], os.Args[3])
	default:
		err = errors.New("usage: benchpoolfloor record FRAME TETHER run ... | benchpoolfloor replay STATE_ROOT FRAME")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchpoolfloor:", err)
	}
	os.Exit(code)
}

// readFrame reads one length-prefixed frame's bytes.
func readFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// writeFrame writes v as one length-prefixed JSON frame.
func writeFrame(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	_, err = w.Write(append(out, b...))
	return err
}

func record(out string, argv []string) error {
	root, err := os.MkdirTemp("", "benchpoolfloor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	// A sandbox's root (an unprivileged host id) traverses to its state.
	if err := os.Chmod(root, 0o711); err != nil {
		return err
	}
	l, err := net.Listen("unix", filepath.Join(root, "pool.sock"))
	if err != nil {
		return err
	}
	defer l.Close()
	got := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- err
			return
		}
		defer c.Close()
		b, err := readFrame(c)
		if err == nil {
			var f frame
			if err = json.Unmarshal(b, &f); err == nil && f.Op != "run" {
				err = fmt.Errorf("first frame %q, want run", f.Op)
			}
		}
		if err == nil {
			err = os.WriteFile(out, binary.BigEndian.AppendUint32(nil, uint32(len(b))), 0o600)
		}
		if err == nil {
			var fh *os.File
			if fh, err = os.OpenFile(out, os.O_WRONLY|os.O_APPEND, 0); err == nil {
				_, err = fh.Write(b)
				err = errors.Join(err, fh.Close())
			}
		}
		_ = writeFrame(c, map[string]string{"op": "nomatch", "reason": "benchpoolfloor is recording"})
		got <- err
	}()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "TETHER_STATE_ROOT="+root)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	// The command's own status does not matter: only its frame.
	var exitErr *exec.ExitError
	if err := cmd.Run(); err != nil && !errors.As(err, &exitErr) {
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	l.Close()
	if err := <-got; err != nil {
		return fmt.Errorf("recording the run frame (did %s dial the pool?): %w", argv[0], err)
	}
	return nil
}

func replay(stateRoot, path string) (int, error) {
	req, err := os.ReadFile(path)
	if err != nil {
		return 125, err
	}
	c, err := net.Dial("unix", filepath.Join(stateRoot, "pool.sock"))
	if err != nil {
		return 125, err
	}
	defer c.Close()
	if _, err := c.Write(req); err != nil {
		return 125, err
	}
	for first := true; ; first = false {
		b, err := readFrame(c)
		if err != nil {
			return 125, err
		}
		var f frame
		if err := json.Unmarshal(b, &f); err != nil {
			return 125, err
		}
		switch {
		case first && f.Op == "accepted":
			if err := writeFrame(c, map[string]string{"op": "go"}); err != nil {
				return 125, err
			}
		case first:
			return 124, fmt.Errorf("no pooled sandbox: %s %s", f.Op, f.Reason)
		case f.Op == "output" && f.Stream == 2:
			_, _ = os.Stderr.Write(f.Data)
		case f.Op == "output":
			_, _ = os.Stdout.Write(f.Data)
		case f.Op == "result" && f.Result != nil:
			if f.Error != "" {
				fmt.Fprintln(os.Stderr, "benchpoolfloor:", f.Error)
			}
			return f.Result.ExitCode, nil
		default:
			return 125, fmt.Errorf("unexpected frame %q", f.Op)
		}
	}
}
