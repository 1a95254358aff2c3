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
		`BEGIN { system("rm -rf ~") }`:          {"rm -rf ~"},
		`BEGIN{system ( "a \"b\"" )}`:           {`a "b"`},
		`{ print $1 | "sort -u" }`:              {"sort -u"},
		`BEGIN { "date" | getline d; print d }`: {"date"},
		`{ printf "%s" |& "bc" }`:               {"bc"},
		`{ print "system(\"x\")" }`:             nil,
		`{ if ($1 == "rm -rf /") print }`:       nil,
		`BEGIN { system("rm " "-rf ~") }`:       nil, // built at run time
	}
	for prog, want := range cases {
		assert.Equal(t, want, AwkCommandStrings(prog), prog)
	}
}
