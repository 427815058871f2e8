package store

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/google/uuid"
)

// gtidSet is a set of GTIDs of either flavor: what a server has applied,
// or what a client brought back from a write. MySQL's sets are read here,
// tags (MySQL 8.3 on: uuid:tag:n) included, which the replication
// library does not read; MariaDB's by the library.
type gtidSet struct {
	maria gomysql.GTIDSet
	// mysql maps "uuid" or "uuid:tag" (lower case, as the server prints
	// them) to sorted, disjoint, non-adjacent closed intervals.
	mysql map[string][][2]int64
	text  string
}

// maxGTIDNumber is the largest transaction number MySQL gives (2^63-1).
const maxGTIDNumber = 1<<63 - 1

// parseGTIDSet reads a GTID set as the flavor's server prints it.
func parseGTIDSet(flavor, s string) (*gtidSet, error) {
	if flavor == gomysql.MariaDBFlavor {
		set, err := gomysql.ParseMariadbGTIDSet(s)
		if err != nil {
			return nil, err
		}
		return &gtidSet{maria: set, text: s}, nil
	}
	g := &gtidSet{mysql: map[string][][2]int64{}, text: s}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		fields := strings.Split(part, ":")
		u, err := uuid.Parse(fields[0])
		if err != nil || len(fields) < 2 {
			return nil, fmt.Errorf("gtid set: %q is not uuid:interval", part)
		}
		key := u.String()
		for _, f := range fields[1:] {
			if f == "" {
				return nil, fmt.Errorf("gtid set: empty field in %q", part)
			}
			if c := f[0]; c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				if !validTag(f) {
					return nil, fmt.Errorf("gtid set: %q is not a tag", f)
				}
				key = u.String() + ":" + strings.ToLower(f)
				continue
			}
			iv, err := parseInterval(f)
			if err != nil {
				return nil, err
			}
			g.mysql[key] = addInterval(g.mysql[key], iv)
		}
	}
	return g, nil
}

// validTag: a letter or underscore, then letters, digits and underscores,
// 32 at most.
func validTag(t string) bool {
	if len(t) > 32 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

var errInterval = errors.New("gtid set: bad interval")

func parseInterval(f string) ([2]int64, error) {
	a, b, ranged := strings.Cut(f, "-")
	lo, err := strconv.ParseInt(a, 10, 64)
	if err != nil || lo < 1 {
		return [2]int64{}, fmt.Errorf("%w %q", errInterval, f)
	}
	hi := lo
	if ranged {
		if hi, err = strconv.ParseInt(b, 10, 64); err != nil || hi < lo {
			return [2]int64{}, fmt.Errorf("%w %q", errInterval, f)
		}
	}
	if hi > maxGTIDNumber-1 {
		return [2]int64{}, fmt.Errorf("%w %q", errInterval, f)
	}
	return [2]int64{lo, hi}, nil
}

// addInterval merges iv into the sorted, disjoint intervals s.
func addInterval(s [][2]int64, iv [2]int64) [][2]int64 {
	s = append(s, iv)
	slices.SortFunc(s, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	out := s[:1]
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		if x[0] <= last[1]+1 {
			last[1] = max(last[1], x[1])
			continue
		}
		out = append(out, x)
	}
	return out
}

// Contain tells whether every GTID of o is in g. Sets of different
// flavors contain nothing of each other.
func (g *gtidSet) Contain(o *gtidSet) bool {
	if g == nil || o == nil {
		return false
	}
	if g.maria != nil || o.maria != nil {
		return g.maria != nil && o.maria != nil && g.maria.Contain(o.maria)
	}
	for key, want := range o.mysql {
		have := g.mysql[key]
		for _, w := range want {
			if !slices.ContainsFunc(have, func(h [2]int64) bool { return h[0] <= w[0] && w[1] <= h[1] }) {
				return false
			}
		}
	}
	return true
}

// String is the set as it was read: what the server's wait functions take.
func (g *gtidSet) String() string { return g.text }
