package changes

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/wpsidecar/wpsidecar"
)

// columns is the column names of a row event's table, in order, as many
// as the event has values: the log's own where the server names them
// (binlog_row_metadata=FULL), else read from information_schema, and
// read again when not known (a table created after the feed started),
// after a DDL statement, or when the count differs. nil when the table
// does not have that many columns now (an event older than a change of
// the table), or they cannot be read, which is logged.
func (f *Feed) columns(ctx context.Context, tm *replication.TableMapEvent) []string {
	n := int(tm.ColumnCount)
	if names := tm.ColumnNameString(); len(names) == n && n > 0 && names[0] != "" {
		return names
	}
	table := string(tm.Table)
	if c, ok := f.cols[table]; ok && !f.colsStale && len(c) == n {
		return c
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if f.colsStale {
		clear(f.cols) // every table's read again when next seen
		f.colsStale = false
	}
	if err := f.readColumns(rctx, table); err != nil {
		f.o.Log.Warn().Err(err).Str("table", table).Msg("binlog change feed: the table's columns could not be read; its rows in this transaction are not interpreted")
		return nil
	}
	if c := f.cols[table]; len(c) == n {
		return c
	}
	f.o.Log.Warn().Str("table", table).Int("logged", n).Int("now", len(f.cols[table])).
		Msg("binlog change feed: the log's rows do not match the table's columns now; its rows in this transaction are not interpreted")
	return nil
}

// readColumns learns the column order of the followed tables and of table
// (another site's, on a network): row events carry values, not names,
// unless the server logs them. What the feed's user may not see (a user
// with replication grants alone sees no columns) is read over the site's
// own connection, when there is one.
func (f *Feed) readColumns(ctx context.Context, table string) error {
	if f.cols == nil {
		f.cols = map[string][]string{}
	}
	tables := []string{f.o.Options, f.o.Users, f.o.Usermeta, table}
	for _, t := range f.o.Tables {
		tables = append(tables, t.Name)
	}
	for _, t := range tables {
		delete(f.cols, t)
	}
	cols, err := f.server.Columns(ctx, f.o.Schema, tables...)
	if err != nil {
		return err
	}
	if _, seen := cols[table]; !seen && f.o.Primary != nil {
		if cols, err = f.o.Primary.Columns(ctx, f.o.Schema, tables...); err != nil {
			return err
		}
	}
	for t, c := range cols {
		f.cols[t] = c
	}
	return nil
}

// pending is what a transaction changed, reported at its commit.
type pending struct {
	sites   map[int64]*sitePending
	touched wpsidecar.Touched
	// ours: the transaction wrote the history, as the sidecar's writes do.
	ours bool
	// gtid is the transaction's GTID, where the server has them.
	gtid string
	// written is a row the transaction wrote in each followed table, by
	// its primary key: what commit waits on to be visible.
	written []writtenRow
	// open: the transaction has begun (its GTID or BEGIN read) and not
	// ended.
	open bool
}

type writtenRow struct {
	table, column string
	id            int64
}

// sitePending is what a transaction changed of one site's namespaces,
// item by item, row image by row image.
type sitePending struct {
	tables  []objectPending // by FeedOptions.Tables' index
	options []objectPending // by FeedOptions.OptionRows' index
}

// objectPending is what a transaction changed of one site's table or
// option row of a namespace: the table (with the site's prefix) or the
// option's name, and its items.
type objectPending struct {
	object string
	items  []wpsidecar.Item
}

func (f *Feed) site(tx *pending, id int64) *sitePending {
	if tx.sites == nil {
		tx.sites = map[int64]*sitePending{}
	}
	if tx.sites[id] == nil {
		tx.sites[id] = &sitePending{tables: make([]objectPending, len(f.o.Tables)), options: make([]objectPending, len(f.o.OptionRows))}
	}
	return tx.sites[id]
}

// table is the index in FeedOptions.Tables of the table whose site-1 name
// is name; -1 for none.
func (f *Feed) table(name string) int {
	return slices.IndexFunc(f.o.Tables, func(t Table) bool { return t.Name == name })
}

// siteTable is the site-1 name of a site's table ({base}2_options:
// {base}options) and the site: 0 on a single site, 1 for the base
// prefix's tables on a network.
func (f *Feed) siteTable(table string) (string, int64) {
	base := f.o.BasePrefix
	if base == "" {
		return table, 0
	}
	if rest, ok := strings.CutPrefix(table, base); ok {
		if n, name, ok := strings.Cut(rest, "_"); ok {
			if id, err := strconv.ParseInt(n, 10, 64); err == nil && id > 1 && strconv.FormatInt(id, 10) == n {
				return base + name, id
			}
		}
	}
	return table, 1
}

// collect notes a row event's entities.
func (f *Feed) collect(ctx context.Context, tx *pending, e *replication.RowsEvent, et replication.EventType) {
	if string(e.Table.Schema) != f.o.Schema {
		return
	}
	table := string(e.Table.Table)
	if i := slices.Index(f.o.Sites, table); i >= 0 && i < len(sitesKeys) {
		tx.touched.Network = true
		// The site map is read again: once the transaction shows.
		if cols := f.columns(ctx, e.Table); cols != nil && len(e.Rows) > 0 {
			f.noteWritten(tx, table, sitesKeys[i], rowNum(cols, e.Rows[0], sitesKeys[i]))
		}
		return
	}
	name, siteID := f.siteTable(table)
	if f.readsRows(name) && !wholeImages(e) {
		// binlog_row_image is no longer FULL: what the feed reads of the
		// rows (their ids, an option's name) may be missing.
		tx.touched.DDL = true
		if f.imageNoted.CompareAndSwap(false, true) {
			f.o.Log.Error().Str("table", table).Msg("binlog change feed: rows logged without all their columns (binlog_row_image is not FULL): such writes are not interpreted, and whatever memory keeps is dropped at each; SET GLOBAL binlog_row_image=FULL, and in my.cnf")
		}
		return
	}
	rows := e.Rows
	if quiet := f.o.QuietColumns[name]; len(quiet) > 0 && isUpdate(et) {
		if cols := f.columns(ctx, e.Table); cols != nil {
			rows = loudRows(cols, rows, quiet)
		}
	}
	if f.o.EveryTable && len(rows) > 0 {
		touchWrote(&tx.touched, siteID, name)
	}
	if want := f.o.RowValues[name]; len(want) > 0 && len(rows) > 0 {
		cols := f.columns(ctx, e.Table)
		if cols == nil {
			tx.touched.DDL = true // which rows is not known
			return
		}
		for _, row := range rows { // an update's before and after images both
			for _, c := range want {
				touchRowValue(&tx.touched, siteID, name+"."+c, rowText(cols, row, c))
			}
		}
	}
	if pk := f.o.Keys[name]; pk != "" && len(rows) > 0 {
		if cols := f.columns(ctx, e.Table); cols != nil {
			f.noteWritten(tx, table, pk, rowNum(cols, rows[0], pk))
		}
	}
	ti := f.table(name)
	switch name {
	case f.o.HistoryTable:
		tx.ours = true
		return
	case f.o.Options, f.o.Users, f.o.Usermeta:
	default:
		if ti < 0 {
			return
		}
	}
	cols := f.columns(ctx, e.Table)
	if cols == nil {
		// The rows cannot be read: whatever kept them must let go.
		tx.touched.DDL = true
		return
	}
	col := func(row []any, name string) string { return rowString(cols, row, name) }
	num := func(row []any, name string) int64 { return rowNum(cols, row, name) }
	if pk := f.primaryKey(name); pk != "" && len(e.Rows) > 0 {
		f.noteWritten(tx, table, pk, num(e.Rows[0], pk))
	}
	switch {
	case ti >= 0:
		t := f.o.Tables[ti]
		if tx.touched.Tables == nil {
			tx.touched.Tables = map[string][]string{}
		}
		if _, ok := tx.touched.Tables[table]; !ok {
			tx.touched.Tables[table] = []string{} // written, whatever its keys read as
		}
		for _, row := range e.Rows {
			if k := col(row, t.Key); k != "" && !slices.Contains(tx.touched.Tables[table], k) {
				tx.touched.Tables[table] = append(tx.touched.Tables[table], k)
			}
		}
		image := func(row []any) map[string]string {
			m := make(map[string]string, len(cols))
			for _, c := range cols {
				m[c] = col(row, c)
			}
			return m
		}
		p := &f.site(tx, siteID).tables[ti]
		p.object = table
		p.items = append(p.items, tableItems(t, e.Rows, et, image)...)
	case name == f.o.Users, name == f.o.Usermeta:
		idCol := "ID"
		if table == f.o.Usermeta {
			idCol = "user_id"
		}
		for _, row := range e.Rows { // an update's before and after images both
			if id := num(row, idCol); id != 0 && !slices.Contains(tx.touched.UserIDs, id) {
				tx.touched.UserIDs = append(tx.touched.UserIDs, id)
			}
		}
	case name == f.o.Options:
		if tx.touched.Options == nil {
			tx.touched.Options = map[int64][]string{}
		}
		for _, row := range e.Rows {
			if name := col(row, "option_name"); name != "" && !slices.Contains(tx.touched.Options[siteID], name) {
				tx.touched.Options[siteID] = append(tx.touched.Options[siteID], name)
			}
		}
		f.collectOptions(tx, siteID, e.Rows, et, col)
	}
}

// readsRows tells whether the feed reads the rows of a table (site-1
// name name), not just its name: their ids, keys, an option's name.
func (f *Feed) readsRows(name string) bool {
	return len(f.o.RowValues[name]) > 0 || f.o.Keys[name] != "" || name == f.o.Options || name == f.o.Users || name == f.o.Usermeta || f.table(name) >= 0
}

// wholeImages tells whether e's row images hold every column of its
// table, as binlog_row_image=FULL logs them.
func wholeImages(e *replication.RowsEvent) bool {
	for _, bm := range [][]byte{e.ColumnBitmap1, e.ColumnBitmap2} {
		if bm == nil {
			continue
		}
		for i := range int(e.ColumnCount) {
			if i/8 >= len(bm) || bm[i/8]&(1<<(i%8)) == 0 {
				return false
			}
		}
	}
	return true
}

// loudRows are the before and after images of an update's rows (rows, in
// pairs) that changed a column but those named quiet.
func loudRows(cols []string, rows [][]any, quiet []string) [][]any {
	var out [][]any
	for i := 0; i+1 < len(rows); i += 2 {
		before, after := rows[i], rows[i+1]
		for c := range max(len(before), len(after)) {
			if c < len(cols) && slices.Contains(quiet, cols[c]) {
				continue
			}
			if c >= len(before) || c >= len(after) || !reflect.DeepEqual(before[c], after[c]) {
				out = append(out, before, after)
				break
			}
		}
	}
	return out
}

// collectOptions notes the items of the followed option rows a rows event
// of site's options table changed. col is a row image's text column.
func (f *Feed) collectOptions(tx *pending, siteID int64, rows [][]any, et replication.EventType, col func([]any, string) string) {
	for ri, r := range f.o.OptionRows {
		optName := r.Name(siteID)
		if optName == "" {
			continue
		}
		for i := 0; i < len(rows); i += step(et) {
			if col(rows[i], "option_name") != optName {
				continue
			}
			before, after := "", col(rows[i], "option_value")
			if isUpdate(et) && i+1 < len(rows) {
				before, after = after, col(rows[i+1], "option_value")
			} else if deleted(et) {
				before, after = after, ""
			}
			p := &f.site(tx, siteID).options[ri]
			p.object = optName
			p.items = append(p.items, r.Diff(before, after)...)
		}
	}
}

// tableItems are the items of a rows event of t's table: one a row
// written (its value as the history keeps it may not have changed: a
// write of its dates alone), and, for an update that changed a row's
// key, the old key's removal and the new one's creation. image is a row
// image's text columns by name.
func tableItems(t Table, rows [][]any, et replication.EventType, image func([]any) map[string]string) []wpsidecar.Item {
	var out []wpsidecar.Item
	add := func(before, after map[string]string) {
		key := after[t.Key]
		if before != nil {
			key = before[t.Key]
		}
		if key != "" {
			out = append(out, t.item(key, before, after))
		}
	}
	for i := 0; i < len(rows); i += step(et) {
		row := image(rows[i])
		switch {
		case isUpdate(et) && i+1 < len(rows):
			next := image(rows[i+1])
			if row[t.Key] != next[t.Key] {
				add(row, nil)
				add(nil, next)
			} else {
				add(row, next)
			}
		case deleted(et):
			add(row, nil)
		default:
			add(nil, row)
		}
	}
	return out
}

// isUpdate and deleted tell a rows event's kind. MariaDB's log_bin_compress
// writes rows events of types of their own; MySQL's
// binlog_row_value_options=PARTIAL_JSON logs every update as a partial one
// (full images of the followed tables, which have no JSON column).
func isUpdate(t replication.EventType) bool {
	switch t {
	case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
		replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.PARTIAL_UPDATE_ROWS_EVENT:
		return true
	}
	return false
}

func deleted(t replication.EventType) bool {
	switch t {
	case replication.DELETE_ROWS_EVENTv0, replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2,
		replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		return true
	}
	return false
}

// step is how many images a row has in an event: an update's before and
// after, one otherwise.
func step(t replication.EventType) int {
	if isUpdate(t) {
		return 2
	}
	return 1
}

// sitesKeys are the primary keys of a network's tables of sites, in
// FeedOptions.Sites' order ({base}blogs, {base}site).
var sitesKeys = [2]string{"blog_id", "id"}

// rowNum is the integer column name of a row image (0 when there is none).
func rowNum(cols []string, row []any, name string) int64 {
	if i := slices.Index(cols, name); i >= 0 && i < len(row) {
		switch v := row[i].(type) {
		case int64:
			return v
		case uint64:
			return int64(v)
		case int32:
			return int64(v)
		case uint32:
			return int64(v)
		case int16:
			return int64(v)
		case uint16:
			return int64(v)
		case int8:
			return int64(v)
		case uint8:
			return int64(v)
		}
	}
	return 0
}

// rowString is a row's text column as it is; "" for another type or no
// such column.
func rowString(cols []string, row []any, name string) string {
	if i := slices.Index(cols, name); i >= 0 && i < len(row) {
		switch v := row[i].(type) {
		case string:
			return v
		case []byte:
			return string(v)
		}
	}
	return ""
}

// rowText is a row's column as text: a text column as it is, an integer
// in decimal; "" for NULL, another type or no such column.
func rowText(cols []string, row []any, name string) string {
	if s := rowString(cols, row, name); s != "" {
		return s
	}
	if n := rowNum(cols, row, name); n != 0 {
		return strconv.FormatInt(n, 10)
	}
	return ""
}

// noteWritten keeps a row the transaction wrote in table, by its primary
// key, for commit to wait on (one per table).
func (f *Feed) noteWritten(tx *pending, table, pk string, id int64) {
	if id == 0 || slices.ContainsFunc(tx.written, func(w writtenRow) bool { return w.table == table }) {
		return
	}
	tx.written = append(tx.written, writtenRow{table, pk, id})
}

// primaryKey is the primary key column of a followed table (site-1
// name); "" for none.
func (f *Feed) primaryKey(name string) string {
	if i := f.table(name); i >= 0 {
		return f.o.Tables[i].ID
	}
	switch name {
	case f.o.Options:
		return "option_id"
	case f.o.Users:
		return "ID"
	case f.o.Usermeta:
		return "umeta_id"
	}
	return ""
}
