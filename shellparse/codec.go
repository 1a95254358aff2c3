package shellparse

import (
	"encoding/base64"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Identity copies. Bytes that go through a program and its inverse are the
// bytes they started as: "base64 /sbin/reboot | base64 -d > x", "gzip -c
// /bin/rm | gunzip > x", "xxd /sbin/reboot | xxd -r > x", "tee x <
// /sbin/reboot" and "cat /bin/rm | dd of=x" all make x a copy of the
// program, which dataflow.go then runs as that program. The walker keeps,
// for a command's standard input, the bytes it reads when they are a known
// text or a copy of a file (a pipeline stage's output, a "< FILE"
// redirection), and an encoding stack (output.enc): each encoder pushes
// its codec, its decoder pops it; bytes still encoded are a file whose
// content is not known as a program or script.

// maxEncodings bounds the codecs stacked on one stream.
const maxEncodings = 4

// codec is a reversible transformation: the codec's name (programs of one
// format share it) and whether the invocation decodes.
type codec struct {
	name   string
	decode bool
}

// compressors are the stream compressors, by program name: the format, and
// whether the name itself decompresses to standard output (zcat).
var compressors = map[string]struct {
	format string
	decode bool
	cat    bool
}{
	"gzip": {format: "gzip"}, "pigz": {format: "gzip"}, "gunzip": {format: "gzip", decode: true}, "zcat": {format: "gzip", decode: true, cat: true},
	"unpigz": {format: "gzip", decode: true},
	"bzip2":  {format: "bzip2"}, "pbzip2": {format: "bzip2"}, "bunzip2": {format: "bzip2", decode: true}, "bzcat": {format: "bzip2", decode: true, cat: true},
	"xz": {format: "xz"}, "unxz": {format: "xz", decode: true}, "xzcat": {format: "xz", decode: true, cat: true},
	"lzma": {format: "lzma"}, "unlzma": {format: "lzma", decode: true}, "lzcat": {format: "lzma", decode: true, cat: true},
	"zstd": {format: "zstd"}, "zstdmt": {format: "zstd"}, "unzstd": {format: "zstd", decode: true}, "zstdcat": {format: "zstd", decode: true, cat: true},
	"lz4": {format: "lz4"}, "unlz4": {format: "lz4", decode: true}, "lz4cat": {format: "lz4", decode: true, cat: true},
	"lzip": {format: "lzip"}, "brotli": {format: "brotli"},
}

// copies reports whether program may print a copy of bytes it reads (a
// filter filterStep reads, tee, dd): only their output is followed into
// the next pipeline stage.
func copies(program string) bool {
	switch program {
	case "cat", "pv", "base64", "base32", "xxd", "tee", "dd", "tar":
		return true
	}
	_, ok := compressors[program]
	return ok
}

// filterStep reads a filter command: the codec it applies (zero for an
// identity filter such as cat), the one file it reads ("" for standard
// input) and ok false when the command is not a filter of one stream the
// walker models (options it does not know, several files, output written
// elsewhere).
func filterStep(program string, args []Word) (c codec, file string, ok bool) {
	var ops []string
	opts := ""
	for _, a := range args {
		v := a.Value
		switch {
		case v == "-" || !strings.HasPrefix(v, "-"):
			ops = append(ops, v)
		case strings.HasPrefix(v, "--"):
			opts += " " + v
		default:
			opts += " " + v
		}
	}
	if len(ops) > 1 {
		return codec{}, "", false
	}
	if len(ops) == 1 && ops[0] != "-" {
		file = ops[0]
	}
	flags := strings.Fields(opts)
	switch program {
	case "cat", "pv":
		return codec{}, file, len(flags) == 0
	case "base64", "base32":
		for _, f := range flags {
			switch f {
			case "-d", "--decode", "-di", "-id":
				c.decode = true
			case "-i", "--ignore-garbage", "-w0", "--wrap=0":
			default:
				return codec{}, "", false
			}
		}
		c.name = program
		return c, file, true
	case "xxd":
		c.name = "xxd"
		for _, f := range flags {
			switch f {
			case "-r", "-revert":
				c.decode = true
			case "-p", "-ps", "-postscript", "-plain":
				c.name = "xxd-p"
			case "-rp", "-pr":
				c.decode, c.name = true, "xxd-p"
			default:
				return codec{}, "", false
			}
		}
		return c, file, true
	}
	z, isZ := compressors[program]
	if !isZ {
		return codec{}, "", false
	}
	c = codec{name: z.format, decode: z.decode}
	stdout := z.cat || file == ""
	for _, f := range flags {
		switch f {
		case "--stdout", "--to-stdout", "--decompress", "--uncompress", "--keep", "--force", "--quiet", "--fast", "--best":
			if f == "--stdout" || f == "--to-stdout" {
				stdout = true
			}
			if f == "--decompress" || f == "--uncompress" {
				c.decode = true
			}
			continue
		}
		if strings.HasPrefix(f, "--") {
			return codec{}, "", false
		}
		for _, ch := range f[1:] {
			switch {
			case ch == 'c':
				stdout = true
			case ch == 'd':
				c.decode = true
			case ch == 'k' || ch == 'f' || ch == 'q' || ch == 'n' || ch == 'N' || ch >= '1' && ch <= '9':
			default:
				return codec{}, "", false
			}
		}
	}
	if !stdout {
		return codec{}, "", false // the file is compressed in place
	}
	return c, file, true
}

// through returns the bytes a filter applying c prints when it reads src.
func through(c codec, src output) output {
	unknown := output{kind: factUnknown}
	if src.kind == factUnknown {
		return unknown
	}
	switch {
	case c.name == "":
		return src
	case !c.decode:
		if strings.Count(src.enc, "/") >= maxEncodings-1 {
			return unknown
		}
		if src.enc != "" {
			src.enc += "/"
		}
		src.enc += c.name
		return src
	case src.enc == c.name || strings.HasSuffix(src.enc, "/"+c.name):
		src.enc = strings.TrimSuffix(strings.TrimSuffix(src.enc, c.name), "/")
		return src
	case src.enc == "" && src.kind == factText && c.name == "base64":
		// Known text decoded: "echo cmVib290 | base64 -d".
		if b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(src.text), "")); err == nil {
			return output{kind: factText, text: string(b), lit: true}
		}
	}
	return unknown
}

// redirectedBytes returns the bytes a statement's own "< FILE" puts on its
// standard input when FILE is a literal path (a copy of it, or what this
// line wrote there); nil otherwise.
func (w *walker) redirectedBytes(s *syntax.Stmt, redirs []Redir) *output {
	var out *output
	for k, r := range s.Redirs {
		if k >= len(redirs) || (r.N != nil && r.N.Value != "0") {
			continue
		}
		switch r.Op {
		case syntax.RdrIn:
			out = nil
			if t := redirs[k].Target; t.Literal {
				o := w.fileOutput(t.Value)
				if o.kind != factUnknown {
					out = &o
				}
			}
		case syntax.WordHdoc, syntax.Hdoc, syntax.DashHdoc, syntax.DplIn, syntax.RdrInOut:
			out = nil
		}
	}
	return out
}

// tarCall is a tar invocation read for one archive stream: create (c) or
// extract (x), the archive file ("" or "-" for the standard stream), the
// directory it works in, and the files it archives.
type tarCall struct {
	mode    byte
	archive string
	dir     string
	files   []string
	stdout  bool // x -O: the files' bytes go to standard output
}

// readTar reads tar's arguments: a first word of bundled letters (cvf,
// xzf …) or options (-c -x -f X -C DIR, --create, --extract, --file=X,
// --directory=X, compression and verbosity), then the files. ok is false
// for anything else (other modes, options not modelled).
func readTar(args []Word) (t tarCall, ok bool) {
	var vals []string
	for _, a := range args {
		if !a.Literal {
			return t, false
		}
		vals = append(vals, a.Value)
	}
	takes := func(k *int) (string, bool) {
		if *k+1 >= len(vals) {
			return "", false
		}
		*k++
		return vals[*k], true
	}
	letters := func(s string, k *int) bool {
		for _, ch := range s {
			switch ch {
			case 'c', 'x':
				if t.mode != 0 {
					return false
				}
				t.mode = byte(ch)
			case 'f', 'C':
				v, ok := takes(k)
				if !ok {
					return false
				}
				if ch == 'f' {
					t.archive = v
				} else {
					t.dir = v
				}
			case 'O':
				t.stdout = true
			case 'v', 'z', 'j', 'J', 'p', 'o':
			default:
				return false
			}
		}
		return true
	}
	for k := 0; k < len(vals); k++ {
		v := vals[k]
		switch {
		case k == 0 && v != "" && !strings.HasPrefix(v, "-"):
			if !letters(v, &k) {
				return t, false
			}
		case v == "--create":
			t.mode = 'c'
		case v == "--extract" || v == "--get":
			t.mode = 'x'
		case strings.HasPrefix(v, "--file="):
			t.archive = v[len("--file="):]
		case strings.HasPrefix(v, "--directory="):
			t.dir = v[len("--directory="):]
		case v == "--file" || v == "--directory":
			x, ok := takes(&k)
			if !ok {
				return t, false
			}
			if v == "--file" {
				t.archive = x
			} else {
				t.dir = x
			}
		case v == "--to-stdout":
			t.stdout = true
		case v == "--gzip" || v == "--bzip2" || v == "--xz" || v == "--zstd" || v == "--verbose":
		case strings.HasPrefix(v, "--"):
			return t, false
		case strings.HasPrefix(v, "-") && len(v) > 1:
			if !letters(v[1:], &k) {
				return t, false
			}
		default:
			t.files = append(t.files, v)
		}
	}
	return t, t.mode != 0
}

// stream returns the archive a "tar c" of one file makes: a copy of the
// file under the "tar" encoding, which extraction undoes.
func (t tarCall) stream() output {
	if t.mode != 'c' || len(t.files) != 1 || t.dir != "" {
		return output{kind: factUnknown}
	}
	return output{kind: factCopy, text: t.files[0], enc: "tar"}
}

// tarInput returns the archive an extraction reads: its file, or its
// standard input.
func (w *walker) tarInput(t tarCall, in *feed, bytes *output) output {
	if t.archive != "" && t.archive != "-" {
		return w.fileOutput(t.archive)
	}
	return stdinOutput(in, bytes)
}

// noteTar records what a tar command writes: the archive file of a create
// (tar cf a.tar /sbin/reboot), and the file an extraction of a known
// one-file archive makes (tar x: the stored path, without its leading "/",
// under -C DIR or the current directory).
func (w *walker) noteTar(cs *cmdState, cmd *Command) {
	t, ok := readTar(cmd.Args)
	if !ok {
		return
	}
	switch t.mode {
	case 'c':
		if t.archive != "" && t.archive != "-" {
			w.addFact(t.stream().fact(t.archive, false))
		}
	case 'x':
		src := w.tarInput(t, cs.stdin, cs.stdinBytes)
		if t.stdout || src.kind != factCopy || src.enc != "tar" {
			return
		}
		dir := t.dir
		if dir == "" {
			dir = "."
		}
		w.addFact(fileFact{path: dir + "/" + strings.TrimLeft(src.text, "/"), kind: factCopy, text: src.text})
	}
}
