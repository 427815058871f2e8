package changes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wpsidecar/wpsidecar/store"
)

// ErrFeedUnusable: the server cannot feed the sidecar (its binary log is
// off, not row-based, or the user may not read it); the error says what
// to change.
var ErrFeedUnusable = errors.New("binlog change feed unusable")

// Check tells what the server lacks for the feed, with the statement or
// the my.cnf lines that give it, and reads where the log stands now (Run
// starts there: what came before is what the sidecar reads anyway). It
// may be called again once Run has returned: the feed then resumes from
// the server's position of that moment, and until Run starts again it
// is not current.
func (f *Feed) Check(ctx context.Context) error {
	err := f.check(ctx)
	if err != nil {
		f.stop(err)
	}
	return err
}

func (f *Feed) check(ctx context.Context) error {
	b, err := f.server.Settings(ctx)
	if err != nil {
		return fmt.Errorf("%w: cannot read the server's binlog settings: %v", ErrFeedUnusable, err)
	}
	f.flavor, f.ordered = b.Flavor, b.OrderedCommits
	f.tls = f.o.Conn.TLS
	if f.o.Conn.AllowFallbackToPlaintext && !b.Encrypted {
		f.tls = nil
	}
	var problems []string
	if b.LogBin != "1" && !strings.EqualFold(b.LogBin, "ON") {
		problems = append(problems, "the binary log is off (start the server with log_bin and a server_id: in my.cnf's [mysqld], log_bin=binlog, server_id=1, binlog_format=ROW and binlog_row_image=FULL, then restart it)")
	}
	if !strings.EqualFold(b.Format, "ROW") {
		problems = append(problems, fmt.Sprintf("binlog_format is %s (SET GLOBAL binlog_format=ROW, and binlog_format=ROW in my.cnf's [mysqld] to keep it)", b.Format))
	}
	if !strings.EqualFold(b.RowImage, "FULL") {
		problems = append(problems, fmt.Sprintf("binlog_row_image is %s (SET GLOBAL binlog_row_image=FULL, and binlog_row_image=FULL in my.cnf's [mysqld] to keep it)", b.RowImage))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrFeedUnusable, strings.Join(problems, "; "))
	}
	f.pos, f.gtid, err = f.server.Position(ctx, f.flavor)
	switch {
	case errors.Is(err, store.ErrNoBinlog):
		return fmt.Errorf("%w: %v", ErrFeedUnusable, err)
	case err != nil:
		return fmt.Errorf("%w: SHOW MASTER STATUS: %v (%s)", ErrFeedUnusable, err, f.grant())
	}
	if err := f.readColumns(ctx, f.o.Options); err != nil {
		return err
	}
	warning := ""
	if !strings.EqualFold(b.RowMetadata, "FULL") && len(f.cols[f.o.Options]) == 0 {
		warning = fmt.Sprintf("the log does not name the rows' columns (binlog_row_metadata is %q) and %s sees none of %s's: rows written outside the sidecar are not interpreted "+
			"(the history and webhooks miss their keys, --cache-rest drops every answer at each write); SET GLOBAL binlog_row_metadata=FULL (and in my.cnf), or GRANT SELECT ON %s.* to the feed's user",
			b.RowMetadata, f.o.Conn.User, f.o.Options, f.o.Schema)
	}
	f.warning.Store(warning)
	f.imageNoted.Store(false)
	return nil
}

// grant is the statement that lets the feed's user read the log (the
// account's host is the one SELECT CURRENT_USER() names; REPLICATION
// CLIENT is BINLOG MONITOR on MariaDB 10.5 and later, which still takes
// the old name).
func (f *Feed) grant() string {
	return fmt.Sprintf("GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '%s'@'%%', the host as SELECT CURRENT_USER() names it", f.o.Conn.User)
}

// Warning is what the feed follows the log without, at a cost ("" none):
// the rows' column names it can neither find in the log nor read (the
// last Check's word); rows logged without all their columns since.
func (f *Feed) Warning() string {
	w, _ := f.warning.Load().(string)
	if f.imageNoted.Load() {
		w = strings.TrimPrefix(w+"; rows were logged without all their columns (binlog_row_image is not FULL): such writes are not interpreted, and whatever memory keeps is dropped at each; SET GLOBAL binlog_row_image=FULL, and in my.cnf", "; ")
	}
	return w
}
