package sandbox

import (
	"context"
)

// Interactive runs cmd in the session on a pty allocated inside the
// sandbox: the command is a session leader with the pty as its controlling
// terminal (so tty, stty and job control work), t.Stdin is typed into it,
// its output goes to t.Stdout, and sizes from t.Resize are applied
// (TIOCSWINSZ, which sends SIGWINCH to its foreground process group). The
// per-command timeout does not apply; ctx stops the command. The command
// counts as running for the idle timeout.
func (s *Session) Interactive(ctx context.Context, cmd Command, t Terminal) (*Result, error) {
	if cmd.Shell == "" && (len(cmd.Args) == 0 || cmd.Args[0] == "") {
		return nil, ErrNoCommand
	}
	cw := &capWriter{}
	out := cw.stream(t.Stdout)
	c := &call{args: cmd.Args, shell: cmd.Shell, cw: cw, stdout: out, stderr: out}
	if err := s.begin(c, true); err != nil {
		return nil, err
	}
	defer s.finish()
	req := &request{
		Op: opExec, ID: c.id, Args: cmd.Args, Shell: cmd.Shell, PTY: true, HasStdin: true,
		Rows: t.Size.Rows, Cols: t.Size.Cols, Env: t.Env, GraceMS: s.grace.Milliseconds(),
	}
	var onStart func()
	if t.Resize != nil {
		// Started once the exec frame is sent, so that no resize frame
		// can reach the supervisor before the command exists.
		onStart = func() {
			go func() {
				for {
					select {
					case <-c.done:
						return
					case sz, ok := <-t.Resize:
						if !ok {
							return
						}
						_ = s.send(&request{Op: opResize, ID: c.id, Rows: sz.Rows, Cols: sz.Cols})
					}
				}
			}()
		}
	}
	return s.await(ctx, c, req, t.Stdin, 0, onStart)
}
