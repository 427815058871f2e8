package fieldgroup

// KeyColumn and IDColumn are the columns of a field-group table that name a row: the
// group's key, and the primary key.
const (
	KeyColumn = "group_key"
	IDColumn  = "id"
)

// RowValue is what the history keeps of a field-group table's row, given
// its columns by name (as the binary log has them): the group's title,
// status and config.
func RowValue(row map[string]string) string {
	return Value{Title: row["title"], Status: row["status"], Config: row["config"]}.JSON()
}
