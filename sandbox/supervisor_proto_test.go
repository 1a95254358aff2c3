package sandbox

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func frame(body string) []byte {
	b := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(b, uint32(len(body)))
	copy(b[4:], body)
	return b
}

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	in := &reply{Op: opOutput, ID: 7, Stream: 2, Data: []byte("hi\x00there")}
	require.NoError(t, writeFrame(&buf, in))
	require.NoError(t, writeFrame(&buf, &reply{Op: opExit, ID: 7, ExitCode: 3}))
	var out reply
	b, err := readFrame(&buf, nil, &out)
	require.NoError(t, err)
	assert.Equal(t, *in, out)
	_, err = readFrame(&buf, b, &out)
	require.NoError(t, err)
	assert.Equal(t, reply{Op: opExit, ID: 7, ExitCode: 3}, out, "no field of the previous frame leaks into the next")
	_, err = readFrame(&buf, b, &out)
	assert.ErrorIs(t, err, io.EOF)
}

func TestReadFrameRejects(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"too large", []byte{0, 0x10, 0, 0}, "frame too large"},
		{"truncated body", frame(`{"op":"ready"}`)[:8], "unexpected EOF"},
		{"unknown field", frame(`{"op":"exit","id":1,"evil":true}`), "unknown field"},
		{"trailing data", frame(`{"op":"ready"} {}`), "trailing data"},
		{"not json", frame(`nope`), "decoding frame"},
		{"wrong type", frame(`{"op":"exit","id":-1}`), "decoding frame"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r reply
			_, err := readFrame(bytes.NewReader(tt.input), nil, &r)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestCheckReply(t *testing.T) {
	tests := []struct {
		name string
		r    reply
		ok   bool
	}{
		{"ready", reply{Op: opReady}, true},
		{"output", reply{Op: opOutput, ID: 1, Stream: 1, Data: []byte("x")}, true},
		{"output without id", reply{Op: opOutput, Stream: 1, Data: []byte("x")}, false},
		{"output bad stream", reply{Op: opOutput, ID: 1, Stream: 3, Data: []byte("x")}, false},
		{"output empty", reply{Op: opOutput, ID: 1, Stream: 1}, false},
		{"output oversized chunk", reply{Op: opOutput, ID: 1, Stream: 1, Data: make([]byte, outputChunk+1)}, false},
		{"exit", reply{Op: opExit, ID: 1, ExitCode: 255, Signal: 9}, true},
		{"exit code out of range", reply{Op: opExit, ID: 1, ExitCode: 256}, false},
		{"negative exit code", reply{Op: opExit, ID: 1, ExitCode: -1}, false},
		{"bad signal", reply{Op: opExit, ID: 1, Signal: 65}, false},
		{"unknown start error", reply{Op: opExit, ID: 1, StartError: "boom"}, false},
		{"negative usage", reply{Op: opExit, ID: 1, CPUMicros: -1}, false},
		{"huge message", reply{Op: opExit, ID: 1, Message: strings.Repeat("x", 5000)}, false},
		{"unknown op", reply{Op: "exec", ID: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkReply(&tt.r)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

func TestWriteFrameRefusesOversized(t *testing.T) {
	err := writeFrame(io.Discard, &request{Op: opStdin, ID: 1, Data: make([]byte, maxFrame)})
	assert.ErrorIs(t, err, errFrameTooLarge)
}

func TestRing(t *testing.T) {
	r := newRing(8)
	r.Write([]byte("abc"))
	b, dropped := r.snapshot()
	assert.Equal(t, "abc", string(b))
	assert.False(t, dropped)
	r.Write([]byte("defgh"))
	b, dropped = r.snapshot()
	assert.Equal(t, "abcdefgh", string(b))
	assert.False(t, dropped)
	r.Write([]byte("ij"))
	b, dropped = r.snapshot()
	assert.Equal(t, "cdefghij", string(b))
	assert.True(t, dropped)
	r.Write([]byte("0123456789"))
	b, _ = r.snapshot()
	assert.Equal(t, "23456789", string(b))
}

func TestApplyState(t *testing.T) {
	s := &supervisor{env: []string{"A=1"}, cwd: "/"}
	s.applyState([]byte("PWD=/tmp\x00B=2\x00_=/bin/cat\x00SHLVL=1\x00\x00\x00"))
	assert.Equal(t, []string{"PWD=/tmp", "B=2"}, s.env)
	assert.Equal(t, "/tmp", s.cwd)
	// An unterminated (cut short) dump changes nothing.
	s.applyState([]byte("PWD=/x\x00C=3\x00"))
	assert.Equal(t, "/tmp", s.cwd)
	// A relative PWD is not adopted as the working directory.
	s.applyState([]byte("PWD=rel\x00\x00"))
	assert.Equal(t, "/tmp", s.cwd)
}

// FuzzReadFrame feeds arbitrary bytes to the host's frame reader and
// validator: they must never panic, and an accepted frame must re-encode.
func FuzzReadFrame(f *testing.F) {
	var seed bytes.Buffer
	_ = writeFrame(&seed, &reply{Op: opOutput, ID: 1, Stream: 1, Data: []byte("x")})
	f.Add(seed.Bytes())
	f.Add(frame(`{"op":"exit","id":3,"exit_code":1,"signal":9,"start_error":"notfound"}`))
	f.Add(frame(`{"op":"ready"}`))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		var buf []byte
		for i := 0; i < 4; i++ {
			var rep reply
			var err error
			buf, err = readFrame(r, buf, &rep)
			if err != nil {
				return
			}
			if checkReply(&rep) == nil {
				require.NoError(t, writeFrame(io.Discard, &rep))
			}
		}
	})
}
