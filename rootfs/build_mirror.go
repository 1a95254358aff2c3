package rootfs

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FallbackMirror is the Debian archive used when this machine's apt sources
// name no mirror for the wanted suite (an Ubuntu host, say).
const FallbackMirror = "http://deb.debian.org/debian"

// DefaultMirror returns the archive URL that this machine's apt sources
// (/etc/apt/sources.list, sources.list.d/*.list and *.sources) use for suite,
// so that debootstrap goes where apt already goes (a local mirror or proxy
// included). It returns FallbackMirror when no enabled source lists suite.
func DefaultMirror(suite string) string {
	if m := mirrorFromSources("/etc/apt", suite); m != "" {
		return m
	}
	return FallbackMirror
}

// mirrorFromSources reads the apt sources under aptDir (normally /etc/apt)
// and returns the first "deb" URI that serves suite, "" when there is none.
func mirrorFromSources(aptDir, suite string) string {
	files := []string{filepath.Join(aptDir, "sources.list")}
	for _, pattern := range []string{"*.list", "*.sources"} {
		m, _ := filepath.Glob(filepath.Join(aptDir, "sources.list.d", pattern))
		slices.Sort(m)
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // absent or unreadable: apt would skip it too
		}
		var uri string
		if strings.HasSuffix(f, ".sources") {
			uri = mirrorDeb822(string(data), suite)
		} else {
			uri = mirrorOneLine(string(data), suite)
		}
		if uri != "" {
			return uri
		}
	}
	return ""
}

// mirrorOneLine reads the one-line format: `deb [options] URI SUITE COMPONENTS...`.
func mirrorOneLine(data, suite string) string {
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 3 || fields[0] != "deb" {
			continue
		}
		fields = fields[1:]
		if strings.HasPrefix(fields[0], "[") {
			// Options: skip up to the field that closes the bracket.
			i := slices.IndexFunc(fields, func(f string) bool { return strings.HasSuffix(f, "]") })
			if i < 0 {
				continue
			}
			fields = fields[i+1:]
		}
		if len(fields) >= 2 && fields[1] == suite && isMirrorURI(fields[0]) {
			return strings.TrimSuffix(fields[0], "/")
		}
	}
	return ""
}

// mirrorDeb822 reads the deb822 format: stanzas of `Key: value` lines
// separated by blank lines, with Types, URIs, Suites and Enabled.
func mirrorDeb822(data, suite string) string {
	for _, stanza := range strings.Split(strings.ReplaceAll(data, "\r\n", "\n"), "\n\n") {
		fields := map[string]string{}
		key := ""
		for _, line := range strings.Split(stanza, "\n") {
			switch {
			case strings.HasPrefix(line, "#"):
			case strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t"):
				if key != "" { // continuation line
					fields[key] += " " + strings.TrimSpace(line)
				}
			default:
				k, v, ok := strings.Cut(line, ":")
				if !ok {
					continue
				}
				key = strings.ToLower(strings.TrimSpace(k))
				fields[key] = strings.TrimSpace(v)
			}
		}
		if strings.EqualFold(fields["enabled"], "no") ||
			!slices.Contains(strings.Fields(fields["types"]), "deb") ||
			!slices.Contains(strings.Fields(fields["suites"]), suite) {
			continue
		}
		for _, u := range strings.Fields(fields["uris"]) {
			if isMirrorURI(u) {
				return strings.TrimSuffix(u, "/")
			}
		}
	}
	return ""
}

// isMirrorURI reports whether debootstrap can fetch from u (apt also knows
// cdrom:, tor+http: and others, which debootstrap does not).
func isMirrorURI(u string) bool {
	return checkMirror(u) == nil
}
