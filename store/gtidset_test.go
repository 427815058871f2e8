package store

import (
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

func TestParseGTIDSet_MySQLTags(t *testing.T) {
	const u = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	const v = "0b6c9c3a-1d2e-11ef-8f00-0242ac120002"
	for _, c := range []struct {
		have, want string
		contains   bool
	}{
		{u + ":1-10", u + ":3", true},
		{u + ":1-10", u + ":3-11", false},
		{u + ":1-5:7-9", u + ":6", false},
		{u + ":1-5:6-9", u + ":2-8", true}, // adjacent intervals merge
		// A tag's numbers are a sequence of their own: uuid:wptag:5 is
		// not uuid:5.
		{u + ":1-10", u + ":wptag:5", false},
		{u + ":wptag:1-10", u + ":5", false},
		{u + ":1-3:wptag:1-10", u + ":WPTAG:5", true}, // tags are read in any case
		{u + ":1-3:wptag:1-10:other:2", u + ":2:wptag:4-6:other:2", true},
		{u + ":1-3:wptag:1-10:other:2", u + ":other:3", false},
		// gtid_executed as the server prints it: upper case uuids, lines.
		{"3E11FA47-71CA-11E1-9E33-C80AA9429562:1-4,\n" + v + ":1-2", v + ":2," + u + ":4", true},
		{"", u + ":1", false},
		{u + ":1", "", true},
	} {
		have, err := parseGTIDSet(gomysql.MySQLFlavor, c.have)
		if err != nil {
			t.Fatalf("%q: %v", c.have, err)
		}
		want, err := parseGTIDSet(gomysql.MySQLFlavor, c.want)
		if err != nil {
			t.Fatalf("%q: %v", c.want, err)
		}
		if got := have.Contain(want); got != c.contains {
			t.Errorf("%q contains %q: %v, want %v", c.have, c.want, got, c.contains)
		}
	}
}

func TestParseGTIDSet_Refuses(t *testing.T) {
	const u = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	for _, s := range []string{
		"nonsense", u, u + ":", u + ":0", u + ":5-3", u + ":1-x", u + ":9tag:1",
		u + ":" + "a23456789012345678901234567890123:1", // a tag of 33 characters
		u + ":1-9223372036854775807", "not-a-uuid:1",
	} {
		if _, err := parseGTIDSet(gomysql.MySQLFlavor, s); err == nil {
			t.Errorf("%q: read, want an error", s)
		}
	}
}

func TestParseGTIDSet_MariaDB(t *testing.T) {
	have, err := parseGTIDSet(gomysql.MariaDBFlavor, "0-1-10,1-2-5")
	if err != nil {
		t.Fatal(err)
	}
	for want, ok := range map[string]bool{"0-1-9": true, "0-1-11": false, "1-2-5": true} {
		w, err := parseGTIDSet(gomysql.MariaDBFlavor, want)
		if err != nil {
			t.Fatal(err)
		}
		if have.Contain(w) != ok {
			t.Errorf("contains %s: %v, want %v", want, !ok, ok)
		}
	}
	mysqlSet, _ := parseGTIDSet(gomysql.MySQLFlavor, "3e11fa47-71ca-11e1-9e33-c80aa9429562:1")
	if have.Contain(mysqlSet) || mysqlSet.Contain(have) {
		t.Error("sets of two flavors contain each other")
	}
}
