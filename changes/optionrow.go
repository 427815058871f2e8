package changes

import "github.com/wpsidecar/wpsidecar"

// OptionRow describes a namespace kept in one row of each site's options
// table, its items within the row's value (the theme options'; any
// namespace shaped alike), as both detectors follow it: cmd lists them,
// and neither detector names a namespace or knows its rules.
type OptionRow struct {
	Namespace wpsidecar.Namespace
	// Name is the option row site (0 on a single site) keeps it in; ""
	// when that site has none. The feed asks it as the log is read: it
	// must be quick.
	Name func(site int64) string
	// Diff is the items that changed between two of the row's values as
	// stored ("" where there was no row).
	Diff func(before, after string) []wpsidecar.Item
}
