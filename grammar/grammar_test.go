package grammar

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parse(cmd string) *Invocation {
	f := strings.Fields(cmd)
	return Parse(f[0], f[1:])
}

// TestEffects checks the effects of argument lists read as their programs
// read them: abbreviations, clusters, "--", subcommands after global options
// with values, unknown options that must not hide a subcommand.
func TestEffects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cmd       string
		want, not Effect
	}{
		{"rm --recur --forc x", Delete | Recursive | Force, 0},
		{"rm -rf x", Recursive | Force, 0},
		{"rm x -r", Recursive, 0},
		{"rm -- -r", Delete, Recursive},
		{"rm --no-pres -r /", Recursive, 0},
		{"rm --help", DryRun, 0},
		{"git -C /tmp/x reset --hard", Discard, 0},
		{"git -C /tmp/x reset --ha", Discard, 0},
		{"git --git-dir=x reset --hard", Discard, 0},
		{"git reset HEAD f", 0, Discard},
		{"git push --force-w", ForcePush, 0},
		{"git push --forc", 0, ForcePush}, // ambiguous: git refuses it
		{"git clean -fdn", Delete | DryRun, 0},
		{"git checkout -- .", Discard, 0},
		{"git checkout main", 0, Discard},
		{"git stash drop", Discard, 0},
		{"git branch -D x", BranchDelete, 0},
		{"git branch --delete --force x", BranchDelete, 0},
		{"git config --global user.name x", ConfigWrite, 0},
		{"git config --global --get user.name", DryRun, ConfigWrite},
		{"git config user.name x", 0, ConfigWrite},
		{"kubectl --context prod delete pod x", ContainerStop, 0},
		{"kubectl --frob prod delete pod x", ContainerStop, 0},
		{"kubectl -n kube-system delete pod x", ContainerStop, 0},
		{"kubectl delete pod x --dry-run=client", ContainerStop | DryRun, 0},
		{"kubectl delete pod x --dry-run=none", ContainerStop, DryRun},
		{"helm --namespace x uninstall y", ContainerStop, 0},
		{"npm --prefix x uninstall -g y", PkgRemove, 0},
		{"npm uninstall left-pad", 0, PkgRemove},
		{"apt-get -o Debug::x=1 remove nginx", PkgRemove, 0},
		{"apt-get -s remove nginx", PkgRemove | DryRun, 0},
		{"docker -H ssh://h ps", Remote, 0},
		{"docker --context x container rm y", ContainerStop, 0},
		{"docker run --privileged x", Privileged, 0},
		{"docker run --pid=host x", Privileged, 0},
		{"docker run x --privileged", 0, Privileged},
		{"systemctl --no-block -H h reboot", Power, 0},
		{"systemctl start reboot.target", Power, 0},
		{"systemctl isolate rescue.target", Power, 0},
		{"systemctl stop nginx", ServiceStop, Power},
		{"systemctl status nginx", 0, Power | ServiceStop},
		{"telinit 6", Power, 0},
		{"init --version", DryRun, Power},
		{"shutdown -c", 0, Power},
		{"shutdown --help", Power | DryRun, 0},
		{"busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager PowerOff b false", Power, 0},
		{"dbus-send --system --print-reply --dest=org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager.Reboot boolean:true", Power, 0},
		{"gdbus call --system --dest org.freedesktop.systemd1 --object-path /org/freedesktop/systemd1 --method org.freedesktop.systemd1.Manager.StartUnit reboot.target replace", Power, 0},
		{"kill -9 -1", KillAll | Kill, 0},
		{"kill -0 -1", 0, KillAll},
		{"kill -- -1", KillAll, 0},
		{"kill -l", DryRun, KillAll},
		{"kill -1 1234", 0, KillAll},
		{"pkill .", KillAll, 0},
		{"pkill -f ''", Kill, 0},
		{"pkill python", Kill, KillAll},
		{"pkill -v python", KillAll, 0},
		{"killall -u bob", KillAll, 0},
		// psmisc killall reads getopt_long_only: "-us" is --user; procps
		// pkill's -s is --session; a selection alone kills all it selects.
		{"killall -us bob", KillAll, 0},
		{"killall --us bob", KillAll, 0},
		{"killall -g -u bob", KillAll, 0},
		{"killall -ualice", KillAll, 0},
		{"killall -9 -u bob", KillAll, 0},
		{"killall -u bob nginx", Kill, KillAll},
		{"killall -l", DryRun, Kill},
		{"pkill -s 0", KillAll, 0},
		{"pkill -KILL -n", Kill, KillAll},
		// shutdown: the last action wins (systemd), -k only warns, --help
		// by any unique prefix exits first, -t takes a value.
		{"shutdown -c -r now", Power, 0},
		{"shutdown -cr now", Power, 0},
		{"shutdown --sh --reb now", Power, 0},
		{"shutdown -r -c", 0, Power},
		{"shutdown -k -r now", 0, Power},
		{"shutdown -t -c now", Power, 0},
		{"shutdown --he /home/alice/ -hP", DryRun, 0},
		{"shutdown --h now", Power, DryRun}, // ambiguous (--help, --halt): never lowers
		{"pgrep .", DryRun, Kill},
		{"wipefs -a /dev/sda", Format, 0},
		{"wipefs /dev/sda", 0, Format},
		{"wipefs --no-act -a /dev/sda", Format | DryRun, 0},
		{"sgdisk --zap-all /dev/sda", Format, 0},
		{"sgdisk -Z /dev/sda", Format, 0},
		{"sgdisk -p /dev/sda", 0, Format},
		{"sgdisk -p -Z /dev/sda", Format, DryRun},
		{"sgdisk -n 1:0:+1G /dev/sda", 0, Format},
		{"sgdisk -P -Z /dev/sda", DryRun, 0},
		{"blkdiscard /dev/nvme0n1", Format, 0},
		{"nvme format /dev/nvme0n1", Format, 0},
		{"cryptsetup -q luksFormat /dev/sda", Format, 0},
		{"hdparm --security-erase p /dev/sda", Format, 0},
		{"parted /dev/sda mklabel gpt", Format, 0},
		{"parted /dev/sda print", 0, Format},
		{"fdisk -l", DryRun, 0},
		{"find / -delete", Delete | Recursive, 0},
		{"find / -name '*.tmp' -delete", Delete, Recursive},
		{"find / ! -name x -delete", Delete | Recursive, 0},
		{"find / -name x -o -delete", Delete | Recursive, 0},
		{"make SHELL=/bin/sh check", 0, 0},
		{"ssh -o ProxyCommand=x h", Network, 0},
		{"ssh h ls", Remote, 0},
		{"ssh -p 22 h", 0, Remote},
		{"rsync -a --del src/ dst/", Delete | Recursive, 0},
		{"crontab -l", DryRun, Schedule},
		{"crontab jobs.txt", Schedule, 0},
		{"mount", 0, Mount},
		{"mount /dev/sdb1 /mnt", Mount, 0},
		{"reboot -w", 0, Power},
	}
	for _, c := range cases {
		inv := parse(c.cmd)
		assert.True(t, inv.Effects.Has(c.want), "%q: effects %b lack %b", c.cmd, inv.Effects, c.want)
		assert.False(t, inv.Effects.Any(c.not), "%q: effects %b hold %b", c.cmd, inv.Effects, c.not)
	}
}

// TestValues checks what option values and operands are.
func TestValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cmd   string
		value string // the option value or operand that must carry eff
		eff   Effect
	}{
		{"sort -o out f", "out", Write},
		{"sort -oout f", "out", Write},
		{"sort --out=out f", "out", Write},
		{"sort --compress-program=gzip f", "gzip", Exec},
		{"tar -cf a.tar x", "a.tar", Write},
		{"tar -xzf a.tar", "a.tar", Write},
		{"tar --to-command=sh -xf a.tar", "sh", Exec},
		{"uniq in out", "out", Write},
		{"tee -a x y", "y", Write},
		{"cp a b c", "c", Write},
		{"cp -t dst a b", "dst", Write},
		{"dd if=x of=/dev/sda", "/dev/sda", Write},
		{"find . -fprint out", "out", Write},
		{"curl -o out https://x", "out", Write},
		{"curl -sSLo out https://x", "out", Write},
		{"wget -qO out https://x", "out", Write},
		{"perl -lne 'print' f", "'print'", Code},
		{"perl -e1", "1", Code},
		{"python3 -Ic x", "x", Code},
		{"python3 -m timeit 1+1", "1+1", Code},
		{"ruby -ne x", "x", Code},
		{"node -p x", "x", Code},
		{"awk {print} f", "{print}", Code},
		{"awk -f p.awk f", "p.awk", Read},
		{"vim -es +x f", "x", Code},
		{"vim -c x f", "x", Code},
		{"sqlite3 db .shell", ".shell", Exec},
		{"gdb -batch -ex run", "run", Code},
		{"git -c core.pager=sh log", "core.pager=sh", Exec},
		{"git -c user.name=x log", "user.name=x", Config},
		{"git fetch --upload-pack=x origin", "x", Exec},
		{"git clone ext::sh", "sh", Exec},
		{"git rebase --exec make main", "make", Exec},
		{"git grep -Ox pat", "x", Exec},
		{"ssh -oProxyCommand=x h", "ProxyCommand=x", Exec},
		{"ssh h rm", "rm", Exec},
		{"rsync -e x a b:", "x", Exec},
		{"scp -S x a b:", "x", Exec},
		{"man -P x ls", "x", Exec},
		{"rg --pre x n", "x", Exec},
		{"make check SHELL=x", "SHELL=x", Env},
		{"make --eval=x", "x", Code},
		{"go test -exec x ./...", "x", Exec},
		{"nc -e /bin/sh h 1", "/bin/sh", Exec},
		{"socat tcp:h:1 exec:sh", "exec:sh", Exec},
		{"mv a b", "a", Delete},
		{"chmod -R 777 d", "d", Target},
	}
	for _, c := range cases {
		inv := parse(c.cmd)
		found := false
		for _, o := range inv.Options {
			if o.HasValue && o.Value == c.value && o.ValueEffects.Has(c.eff) {
				found = true
			}
		}
		for _, op := range inv.Operands {
			if op.Value == c.value && op.Effects.Has(c.eff) {
				found = true
			}
		}
		assert.True(t, found, "%q: no value %q with effects %b: options %+v operands %+v", c.cmd, c.value, c.eff, inv.Options, inv.Operands)
	}
}

// TestWrap checks where wrappers' commands start.
func TestWrap(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cmd  string
		want int // index in args, -1 for none
	}{
		{"nice -n 5 rm", 2},
		{"nice -- rm", 1},
		{"nice -10 rm", 1},
		{"time -- rm", 1},
		{"setsid -f rm", 1},
		{"timeout -s KILL 5 rm", 3},
		{"timeout --sig=KILL 5 rm", 2},
		{"env -i A=1 B=2 rm", 3},
		{"env -u X rm", 2},
		{"sudo -u bob rm", 2},
		{"sudo -l", -1},
		{"sudo -l rm", -1},
		{"command -v rm", -1},
		{"taskset -p 1 2", -1},
		{"taskset 0x1 rm", 1},
		{"setarch x86_64 -R rm", 2},
		{"linux32 rm", 0},
		{"prlimit --nofile=10 rm", 1},
		{"prlimit -p 1", -1},
		{"choom -n 100 -- rm", 3},
		{"unshare -r --fork rm", 2},
		{"nsenter -t 1 -m rm", 3},
		{"valgrind --tool=memcheck rm", 1},
		{"strace -f -o log rm", 3},
		{"ssh-agent rm", 0},
		{"chroot / rm", 1},
		{"xargs -I{} rm", 1},
		{"xargs -0 -n1 rm", 2},
		{"ip netns exec ns rm", 3},
		{"uv run rm", 1},
		{"npx rm", 0},
	}
	for _, c := range cases {
		inv := parse(c.cmd)
		assert.Equal(t, c.want, inv.Command, "%q", c.cmd)
	}
}

// TestCanonical checks option name resolution, as mandates use it.
func TestCanonical(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "--recursive", Canonical("rm", nil, "--recur"))
	assert.Equal(t, "--recursive", Canonical("rm", nil, "-R"))
	assert.Equal(t, "--hard", Canonical("git", []string{"reset"}, "--ha"))
	assert.Equal(t, "--frob", Canonical("rm", nil, "--frob"))
	assert.Equal(t, "--no-preserve-root", Canonical("rm", nil, "--no-pres"))
	assert.Equal(t, "-x", Canonical("nosuchprogram", nil, "-x"))
	// Ambiguous prefixes resolve to nothing, as getopt_long refuses them.
	assert.Equal(t, "--p", Canonical("cp", nil, "--p"))
}

// TestUnknownOptionsNeverSwallow: an unknown option of a known program does
// not take the next word, so an operand stays an operand.
func TestUnknownOptionsNeverSwallow(t *testing.T) {
	t.Parallel()
	inv := parse("rm --frob -r /")
	require.True(t, inv.Unknown)
	assert.True(t, inv.Effects.Has(Recursive))
	require.Len(t, inv.Operands, 1)
	assert.Equal(t, "/", inv.Operands[0].Value)
	assert.True(t, inv.Operands[0].Effects.Has(Target))
}

// TestEnvEffects checks the variables that run code.
func TestEnvEffects(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"LD_PRELOAD", "BASH_ENV", "ENV", "SHELL", "PAGER", "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND",
		"RSYNC_RSH", "PERL5OPT", "PYTHONSTARTUP", "BASH_FUNC_x%%", "GIT_CONFIG_COUNT", "SYSTEMD_PAGER", "KUBE_EDITOR"} {
		assert.True(t, EnvEffects("", n).Has(Exec), n)
	}
	for _, n := range []string{"LC_ALL", "FOO", "HOME", "CI"} {
		assert.False(t, EnvEffects("", n).Has(Exec), n)
	}
	assert.True(t, EnvEffects("make", ".SHELLFLAGS").Has(Exec))
}

// TestTable builds the whole table (a duplicate program panics).
func TestTable(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, table())
	for name, s := range table() {
		for _, o := range s.Options {
			require.NotEmpty(t, o.Names, name)
		}
	}
}

// TestAwkRunsCommands checks the awk program scan.
func TestAwkRunsCommands(t *testing.T) {
	t.Parallel()
	for _, p := range []string{`BEGIN{system("id")}`, `BEGIN { system ( "id" ) }`, `{print | "sh"}`, `{print > "/etc/x"}`, `BEGIN{"id" | getline}`, "BEGIN{system\n(\"id\")}"} {
		assert.True(t, AwkRunsCommands(p), p)
	}
	for _, p := range []string{`{print $1}`, `$1 > 3 {n++}`, `{print "a|b"}`, `{x = "system(1)"}`} {
		assert.False(t, AwkRunsCommands(p), p)
	}
}
