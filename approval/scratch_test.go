package approval

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestScratch(t *testing.T) {
	f := os.Getenv("SCRATCH")
	if f == "" {
		t.Skip()
	}
	fh, _ := os.Open(f)
	sc := bufio.NewScanner(fh)
	section := ""
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# ") {
			section = line[2:]
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		want, cmd, _ := strings.Cut(line, "\t")
		c, _ := unescapeCorpus(cmd)
		a, err := Analyze(c, AnalyzeOptions{Home: ExampleHome})
		if err != nil {
			fmt.Println("ERR", cmd, err)
			continue
		}
		if os.Getenv("SCRATCH_EMIT") != "" {
			safe := "no"
			if a.Safe {
				safe = "yes"
			}
			fmt.Printf("EMIT\t%s\t%s\t%s\tissue 15: %s\n", a.Verdict, safe, cmd, section)
			continue
		}
		mark := "  "
		if a.Verdict.String() != want {
			mark = "XX"
		}
		fmt.Printf("%s %-8s %-8s %s %v\n", mark, want, a.Verdict, cmd, findingIDs(a))
	}
}
