package grammar

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAwkCommandStrings: the literal strings awk hands to sh -c, and none of
// the strings it only prints or compares.
func TestAwkCommandStrings(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		`BEGIN { system("rm -rf ~") }`:                {"rm -rf ~"},
		`BEGIN{system ( "a \"b\"" )}`:                 {`a "b"`},
		`{ print $1 | "sort -u" }`:                    {"sort -u"},
		`BEGIN { "date" | getline d; print d }`:       {"date"},
		`{ printf "%s" |& "bc" }`:                     {"bc"},
		`{ print "system(\"x\")" }`:                   nil,
		`{ if ($1 == "rm -rf /") print }`:             nil,
		`BEGIN { system("rm " "-rf ~") }`:             {"rm -rf ~"}, // a concatenation of literals
		`BEGIN{c="re" "boot"; system(c)}`:             {"reboot"},
		`BEGIN{c = "reboot"; print "x" | c}`:          {"reboot"},
		`BEGIN{c="re" "boot"; c | getline x}`:         {"reboot"},
		`BEGIN{c="ls"; if (x) c="reboot"; system(c)}`: {"ls", "reboot"}, // every value assigned
		`BEGIN{c="ls"; print c}`:                      nil,
		`BEGIN{system(c)}`:                            nil, // not known
		`{ c = $1; system(c) }`:                       nil, // from the input
	}
	for prog, want := range cases {
		assert.Equal(t, want, AwkCommandStrings(prog), prog)
	}
}
