package approval

import "testing"

func TestGlobMatchesAll(t *testing.T) {
	t.Parallel()
	for pat, want := range map[string]bool{
		"?*": true, "[!.]*": true, "**": true, "*?": true, "[[:alnum:]]*": true, "*[a-z]": true,
		"@(*|.*)": true, "!(nothing)": true, "+([a-zA-Z0-9._-])": true, "[^.]*": true,
		"*.log": false, "build-?": false, ".??*": false, "@(*.log|*.tmp)": false, "D*": false, "?": false,
	} {
		if got := globMatchesAll(pat); got != want {
			t.Errorf("globMatchesAll(%q) = %v, want %v", pat, got, want)
		}
	}
}

func TestGlobMatchesDevice(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"/dev/s?a": true, "/dev/s[d]a": true, "/dev/*da1": true, "/d?v/sda": true, "/*/sda": true,
		"/dev/nvme0n1p[0-9]": true, "/dev/@(sda|null)": true, "/dev/mapper/*": true,
		"/dev/tty?": false, "/dev/std*": false, "/tmp/s?a": false, "/dev/null": false, "s?a": false,
	} {
		if got := globMatchesDevice(p); got != want {
			t.Errorf("globMatchesDevice(%q) = %v, want %v", p, got, want)
		}
	}
}
