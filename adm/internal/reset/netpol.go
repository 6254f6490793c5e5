package reset

import "context"

// netpolTables is the table the trireme-netpol addon writes the node's
// NetworkPolicy rules into. It outlives the addon's pods on purpose (policies
// stay enforced while the DaemonSet restarts), so reset removes it.
var netpolTables = [][2]string{{"inet", "trireme-netpol"}}

// CleanupNetworkPolicy removes what the trireme-netpol addon made in this
// node's network namespace, its nftables table, reporting the removal through
// report. A machine without the table or nft is not an error.
func CleanupNetworkPolicy(ctx context.Context, report func(format string, args ...any)) error {
	return cleanupNetworkPolicy(ctx, execCommands{}, report)
}

func cleanupNetworkPolicy(ctx context.Context, cmds commands, report func(format string, args ...any)) error {
	return deleteTables(ctx, cmds, "trireme-netpol", netpolTables, report)
}
