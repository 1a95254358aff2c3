package oracle

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Corpus is a named list of commands to run.
type Corpus struct {
	Name     string
	Commands []string
}

// Unescape decodes the corpus files' escapes: \n \r \t \\ and \uXXXX.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case '\\':
			b.WriteByte('\\')
		case 'u':
			if i+6 <= len(s) {
				if r, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
					b.WriteRune(rune(r))
					i += 5
					continue
				}
			}
			b.WriteString(`\u`)
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i+1])
		}
		i++
	}
	return b.String()
}

// Escape is Unescape's inverse for the characters that would break a TSV
// line.
func Escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}

// notRunMark, in a row's note (its last column), keeps the row from the
// oracle: a command that attacks the oracle's own driver, its sandbox's
// init (gdb -p 1 … call exit(0)), ends the whole run instead of being
// observed. Such rows say so and keep their static tier in approval's
// corpus tests.
const notRunMark = "[oracle: not run, it attacks the driver]"

// ReadTSV returns column col (0-based) of every non-comment line of a TSV
// file, unescaped. A header line whose column is "command" is skipped.
func ReadTSV(path string, col int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Split(line, "\t")
		if len(fs) <= col || fs[col] == "command" {
			continue
		}
		if col < len(fs)-1 && strings.Contains(fs[len(fs)-1], notRunMark) {
			continue // the static side still reads it (approval's corpus tests)
		}
		out = append(out, Unescape(fs[col]))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}

// ReadFuzzCorpus returns the string inputs of a Go fuzz corpus directory
// ("go test fuzz v1" files holding one string(...) value each).
func ReadFuzzCorpus(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(data), "\n") {
			if q, ok := strings.CutPrefix(line, "string("); ok {
				if v, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
					out = append(out, v)
				}
			}
		}
	}
	return out, nil
}
