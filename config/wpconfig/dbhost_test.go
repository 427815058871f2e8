package wpconfig

import (
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testvectors"
)

// TestParseDBHost_Vectors: DB_HOST taken apart as wpdb::parse_db_host
// does, on the vectors PHP made.
func TestParseDBHost_Vectors(t *testing.T) {
	var v struct {
		DBHostParsing struct {
			Vectors []struct {
				DBHost string `json:"DB_HOST"`
				Result struct {
					Host   string  `json:"host"`
					Port   *int    `json:"port"`
					Socket *string `json:"socket"`
					IPv6   bool    `json:"is_ipv6"`
				} `json:"result"`
			} `json:"vectors"`
		} `json:"db_host_parsing"`
	}
	testvectors.Decode(t, &v)
	if len(v.DBHostParsing.Vectors) < 10 {
		t.Fatalf("only %d vectors", len(v.DBHostParsing.Vectors))
	}
	for _, vec := range v.DBHostParsing.Vectors {
		want := DBHost{Host: vec.Result.Host, IPv6: vec.Result.IPv6}
		if vec.Result.Port != nil {
			want.Port = *vec.Result.Port
		}
		if vec.Result.Socket != nil {
			want.Socket = *vec.Result.Socket
		}
		if got := ParseDBHost(vec.DBHost); got != want {
			t.Errorf("ParseDBHost(%q) = %+v, want %+v", vec.DBHost, got, want)
		}
	}
}
