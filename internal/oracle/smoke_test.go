package oracle

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tether-dev/tether/sandbox"
)

func TestSmokeTmp(t *testing.T) {
	o, err := New(t.TempDir(), &sandbox.Runner{CgroupPrefix: "oracle-smoke"})
	require.NoError(t, err)
	obs, lost, err := o.Run(t.Context(), []string{"echo hi", "rm -rf ~", "dd if=/dev/zero of=/dev/disk/by-id/ata-DISK", "kill -9 -1", "reboot", "echo x > /dev/sda", "sudo -u root systemctl --no-bl reboot", ":(){ :|:& };:", "pkill nginx", "find ~ -delete"})
	require.NoError(t, err)
	fmt.Println("lost", lost)
	for _, ob := range obs {
		fmt.Printf("%-9s %q %v %q\n", ob.Tier, ob.Command, ob.Evidence, ob.Stderr)
	}
}
