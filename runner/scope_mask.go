package runner

import (
	"bytes"
	"io"
	"slices"
	"sync"
)

// MaskText replaces a secret value.
const MaskText = "***"

// Masker replaces every occurrence of a set of secret values with "***".
// Where values overlap, the longest one starting at the leftmost position
// wins. A nil *Masker masks nothing. A Masker is immutable and safe for
// concurrent use.
type Masker struct {
	values [][]byte // distinct, non-empty, longest first
	maxLen int
	first  [256]bool // first bytes of the values: other positions are skipped fast
}

// NewMasker returns a Masker for values; empty values are ignored.
func NewMasker(values ...string) *Masker {
	m := &Masker{}
	seen := map[string]bool{}
	for _, v := range values {
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		m.values = append(m.values, []byte(v))
		m.maxLen = max(m.maxLen, len(v))
		m.first[v[0]] = true
	}
	slices.SortStableFunc(m.values, func(a, b []byte) int { return len(b) - len(a) })
	return m
}

// Mask returns s with every secret value replaced.
func (m *Masker) Mask(s string) string {
	if m == nil || len(m.values) == 0 {
		return s
	}
	var out bytes.Buffer
	m.scan(&out, []byte(s), true)
	return out.String()
}

// scan writes buf to out with secrets masked and returns the tail it held
// back: when !final, a tail that might be the start of a secret continued
// by later data is not written.
func (m *Masker) scan(out *bytes.Buffer, buf []byte, final bool) []byte {
	start := 0
	for i := 0; i < len(buf); {
		if !m.first[buf[i]] {
			i++
			continue
		}
		rest := buf[i:]
		if !final && len(rest) < m.maxLen && m.couldStart(rest) {
			out.Write(buf[start:i])
			return buf[i:]
		}
		matched := false
		for _, v := range m.values {
			if bytes.HasPrefix(rest, v) {
				out.Write(buf[start:i])
				out.WriteString(MaskText)
				i += len(v)
				start = i
				matched = true
				break
			}
		}
		if !matched {
			i++
		}
	}
	out.Write(buf[start:])
	return nil
}

// couldStart reports whether rest is a proper prefix of some value, so
// more data could complete a (longer) match at this position.
func (m *Masker) couldStart(rest []byte) bool {
	for _, v := range m.values {
		if len(v) > len(rest) && bytes.HasPrefix(v, rest) {
			return true
		}
	}
	return false
}

// Writer returns a writer that masks a stream written in chunks, so a
// secret split across two writes is still masked. It holds back at most
// the longest secret's length minus one byte; the caller must call Close
// (or Flush) to write the held tail.
func (m *Masker) Writer(w io.Writer) *MaskWriter { return &MaskWriter{m: m, w: w} }

// MaskWriter is a streaming Masker. It is safe for concurrent use.
type MaskWriter struct {
	m *Masker

	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

// Write masks p (with any held tail) and writes what is certain.
func (mw *MaskWriter) Write(p []byte) (int, error) {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if mw.m == nil || len(mw.m.values) == 0 {
		return mw.w.Write(p)
	}
	mw.pending = append(mw.pending, p...)
	var out bytes.Buffer
	rest := mw.m.scan(&out, mw.pending, false)
	mw.pending = append(mw.pending[:0], rest...)
	if _, err := mw.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the held tail, masked as final data.
func (mw *MaskWriter) Flush() error {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if len(mw.pending) == 0 {
		return nil
	}
	var out bytes.Buffer
	mw.m.scan(&out, mw.pending, true)
	mw.pending = mw.pending[:0]
	_, err := mw.w.Write(out.Bytes())
	return err
}

// Close flushes the held tail. It does not close the underlying writer.
func (mw *MaskWriter) Close() error { return mw.Flush() }

// MaskAll masks every string in ss in place and returns it.
func (m *Masker) MaskAll(ss []string) []string {
	for i, s := range ss {
		ss[i] = m.Mask(s)
	}
	return ss
}
