package sandbox

import (
	"fmt"
	"path/filepath"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// NetworkProxy joins the sandbox to a network namespace made beforehand
// (Config.NetNSPath), normally by egress.NewNamespace: loopback only, with
// tether's egress proxy listening on 127.0.0.1 inside it and served from
// the host. The caller puts the proxy variables (egress.Namespace.Env) in
// Config.Env. Needs root: a rootless tether cannot join a namespace it did
// not create in its own user namespace.
const NetworkProxy Network = "proxy"

// validateProxyNetwork checks the fields network mode proxy needs.
func (c Config) validateProxyNetwork() error {
	switch {
	case c.Network == NetworkProxy && c.NetNSPath == "":
		return fmt.Errorf("network proxy needs the path of the proxy's network namespace")
	case c.Network == NetworkProxy && !filepath.IsAbs(c.NetNSPath):
		return fmt.Errorf("network namespace path %q must be absolute", c.NetNSPath)
	case c.Network != NetworkProxy && c.NetNSPath != "":
		return fmt.Errorf("network namespace path given for network mode %q (only proxy joins one)", c.Network)
	}
	return nil
}

// netNamespace is the sandbox's network namespace entry: a new one, or the
// proxy's namespace to join.
func (c Config) netNamespace(p Placement) (specs.LinuxNamespace, error) {
	if c.Network != NetworkProxy {
		return specs.LinuxNamespace{Type: specs.NetworkNamespace}, nil
	}
	if p.Rootless {
		return specs.LinuxNamespace{}, fmt.Errorf("%w: network proxy needs root (a rootless sandbox cannot join the proxy's network namespace)", ErrInvalidConfig)
	}
	return specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: c.NetNSPath}, nil
}

// bindsHostSys reports whether /sys must be the host's, bound read-only: a
// fresh sysfs needs a network namespace owned by the sandbox's user
// namespace, which a joined proxy namespace (owned by the host's) is not.
func (c Config) bindsHostSys(p Placement) bool {
	return p.Rootless || c.Network == NetworkHost || c.Network == NetworkProxy
}
