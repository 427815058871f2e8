package store

// missing: a read that found no group, which the memo does not keep (a
// group created later must be seen).
func (r groupRow) missing() bool { return !r.found }
