package grammar

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPerlFiltersOnly(t *testing.T) {
	t.Parallel()
	yes := [][]string{
		{"-ne", "print"}, {"-ne", "print", "/etc/hostname"}, {"-ne", "print if /x/", "f"}, {"-pe", "s/foo/bar/g", "f"},
		{"-pi", "-e", "s/foo/bar/g", "f"}, {"-i.bak", "-pe", "s/a/b/", "f"}, {"-lane", "print $F[1]", "f"},
		{"-ne", `print "$1\n" if /id=(\d+)/`, "f"}, {"-pe", "s/a/b/;s/c/d/", "f"}, {"-ne", "next unless /x/; print", "f"},
		{"-ne", "/^#/ or print", "-"}, {"-pe", "tr/a-z/A-Z/"}, {"-ne", "print unless /^$/"}, {"-lne", "chomp; print"},
	}
	no := [][]string{
		{"-e", "print 1"}, {"-ne", "system 'reboot'"}, {"-pe", "s/a/`reboot`/e", "f"}, {"-pe", "s/a/b/ee"},
		{"-pe", `s/a/@{[system "reboot"]}/`}, {"-pe", `s/a/${\ system "id"}/`}, {"-ne", `print if /(?{system "reboot"})/`},
		{"-ne", `print if /(??{system "id"})/`}, {"-ne", `print "@{[system 1]}"`}, {"-ne", "print", "reboot|"},
		{"-ne", "print", "|reboot"}, {"-ne", "print", ">f"}, {"-ne", "print", " f"}, {"-ne", "print", "-f"},
		{"-MPOSIX", "-ne", "print", "f"}, {"-I", "lib", "-ne", "print"}, {"-ne", "print STDERR"}, {"-ne", "printf '%s', 1"},
		{"-ne", "print; exec 'id'"}, {"-ne", "open F, '>x'; print F"}, {"-ne", "print $x->()"}, {"-0777", "-ne", "print"},
		{"-pe", "s{a}{b}"}, {"-ne", "eval 'x'"}, {"-i/tmp/*", "-pe", "s/a/b/", "f"}, {"script.pl"}, {},
	}
	for _, args := range yes {
		assert.True(t, PerlFiltersOnly(Parse("perl", args)), "%q", args)
		assert.True(t, CodeInert(Parse("perl", args)), "%q", args)
	}
	for _, args := range no {
		assert.False(t, PerlFiltersOnly(Parse("perl", args)), "%q", args)
	}
	assert.False(t, PerlFiltersOnly(Parse("ruby", []string{"-ne", "print"})), "perl only")
}
