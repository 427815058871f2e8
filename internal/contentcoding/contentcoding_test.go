package contentcoding

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testcoding"
)

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		want   Coding
	}{
		{"no field", nil, Identity},
		{"empty field", []string{""}, Identity},
		{"gzip", []string{"gzip"}, Gzip},
		{"browser", []string{"gzip, deflate, br, zstd"}, Brotli},
		{"server order breaks ties", []string{"gzip, zstd"}, Zstd},
		{"q wins over preference", []string{"br;q=0.5, gzip"}, Gzip},
		{"q with spaces", []string{"br ; q=0.5 ,  gzip ;q=0.8"}, Gzip},
		{"upper case", []string{"GZIP;Q=1, BR;q=0.1"}, Gzip},
		{"x-gzip", []string{"x-gzip"}, Gzip},
		{"deflate only", []string{"deflate"}, Identity},
		{"refused", []string{"br;q=0"}, Identity},
		{"refused among others", []string{"br;q=0, gzip;q=0.001"}, Gzip},
		{"star", []string{"*"}, Brotli},
		{"star but br refused", []string{"*, br;q=0"}, Zstd},
		{"star refused", []string{"*;q=0"}, Identity},
		{"star refused, gzip named", []string{"*;q=0, gzip"}, Gzip},
		{"identity preferred", []string{"identity, gzip;q=0.5"}, Identity},
		{"identity equal loses", []string{"identity;q=0.5, gzip;q=0.5"}, Gzip},
		{"identity refused, nothing else", []string{"identity;q=0"}, Identity},
		{"identity refused by star", []string{"*;q=0, identity;q=0"}, Identity},
		{"identity only", []string{"identity"}, Identity},
		{"first naming counts", []string{"gzip;q=0, gzip"}, Identity},
		{"several lines", []string{"br;q=0.2", "gzip;q=0.3"}, Gzip},
		{"three decimals", []string{"br;q=0.001, gzip;q=0.000"}, Brotli},
		{"q=1.000", []string{"br;q=1.000"}, Brotli},
		{"malformed q ignored", []string{"br;q=2, gzip"}, Gzip},
		{"q=1.5 ignored", []string{"br;q=1.5"}, Identity},
		{"four decimals ignored", []string{"br;q=0.1234"}, Identity},
		{"other parameter ignored", []string{"br;level=1, zstd"}, Zstd},
		{"empty q ignored", []string{"br;q="}, Identity},
		{"not a token ignored", []string{`"br", gzip`}, Gzip},
		{"empty elements", []string{",, ,gzip,"}, Gzip},
		{"tab", []string{"\tbr\t;\tq=0.9"}, Brotli},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Negotiate(tc.values); got != tc.want {
				t.Errorf("Negotiate(%q) = %v, want %v", tc.values, got, tc.want)
			}
		})
	}
}

func TestTags(t *testing.T) {
	for _, tc := range []struct {
		etag   string
		coding Coding
		want   string
	}{
		{`"abc"`, Identity, `"abc"`},
		{`"abc"`, Brotli, `"abc-br"`},
		{`"abc"`, Zstd, `"abc-zstd"`},
		{`"abc-v12345678"`, Gzip, `"abc-v12345678-gzip"`},
		{`W/"abc"`, Gzip, `W/"abc-gzip"`},
		{`abc`, Gzip, `abc`},
		{``, Gzip, ``},
	} {
		got := Tag(tc.etag, tc.coding)
		if got != tc.want {
			t.Errorf("Tag(%s, %v) = %s, want %s", tc.etag, tc.coding, got, tc.want)
		}
		if Base(got) != tc.etag {
			t.Errorf("Base(%s) = %s, want %s", got, Base(got), tc.etag)
		}
	}
}

func TestBaseList(t *testing.T) {
	for in, want := range map[string]string{
		`"abc-br"`:                   `"abc"`,
		`"abc"`:                      `"abc"`,
		`*`:                          `*`,
		`"a-gzip", W/"b-zstd" , "c"`: `"a", W/"b", "c"`,
		`"a,b-br"`:                   `"a,b"`,
		`"abc-deflate"`:              `"abc-deflate"`,
	} {
		if got := BaseList(in); got != want {
			t.Errorf("BaseList(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestNoneMatch(t *testing.T) {
	for _, tc := range []struct {
		inm  []string
		etag string
		want bool
	}{
		{[]string{`"abc"`}, `"abc"`, true},
		{[]string{`"abc-br"`}, `"abc"`, true},
		{[]string{`"abc-zstd"`}, `"abc"`, true},
		{[]string{`W/"abc-gzip"`}, `"abc"`, true},
		{[]string{`"x", "abc-br"`}, `"abc"`, true},
		{[]string{`"x"`, `"abc-gzip"`}, `"abc"`, true},
		{[]string{`*`}, `"abc"`, true},
		{[]string{`*`}, ``, false},
		{[]string{`"abc-deflate"`}, `"abc"`, false},
		{[]string{`"ab"`}, `"abc"`, false},
		{[]string{`"abc-v1-br"`}, `"abc"`, false},
		{[]string{`"abc-v1-br"`}, `"abc-v1"`, true},
		{[]string{`"a,b-br"`}, `"a,b"`, true},
		{nil, `"abc"`, false},
	} {
		if got := NoneMatch(tc.inm, tc.etag); got != tc.want {
			t.Errorf("NoneMatch(%q, %s) = %v, want %v", tc.inm, tc.etag, got, tc.want)
		}
	}
}

func TestEncode(t *testing.T) {
	e := New(0, 0)
	body := []byte(strings.Repeat(`{"key":"group_1","title":"A field group"},`, 100))
	small := body[:MinSize-1]
	for _, c := range []Coding{Identity, Gzip, Zstd, Brotli} {
		got := e.Encode(body, c)
		if !bytes.Equal(testcoding.Decode(t, c.String(), got), body) {
			t.Errorf("%v: does not decode to the body", c)
		}
		if c != Identity && len(got) >= len(body)/4 {
			t.Errorf("%v: %d bytes of %d", c, len(got), len(body))
		}
		if again := e.Encode(body, c); &again[0] != &got[0] {
			t.Errorf("%v: coded again, not taken from the cache", c)
		}
		if got := e.Encode(small, c); !bytes.Equal(got, small) {
			t.Errorf("%v: a body under MinSize is coded", c)
		}
	}
	if n, _ := e.Len(); n != 3 {
		t.Errorf("cache holds %d entries, want 3", n)
	}
}

// TestEncode_Bounded: bodies beyond the bounds replace each other; the
// cache never holds more than its entries and bytes.
func TestEncode_Bounded(t *testing.T) {
	for _, tc := range []struct{ entries, bytes int }{{4, 1 << 20}, {100, 64 << 10}} {
		e := New(tc.entries, tc.bytes)
		for i := range 50 {
			body := fmt.Appendf(nil, "%d %s", i, bytes.Repeat([]byte{byte('a' + i%26)}, 4<<10))
			e.Encode(body, Gzip)
			if n, b := e.Len(); n > tc.entries || b > tc.bytes {
				t.Fatalf("after %d bodies: %d entries, %d bytes, bounds %d and %d", i+1, n, b, tc.entries, tc.bytes)
			}
		}
		if n, _ := e.Len(); n == 0 {
			t.Errorf("bounds %v: nothing kept", tc)
		}
	}
}

func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"gzip, deflate, br, zstd", "*;q=0", "identity;q=0, br;q=0.5", "br;q=1.000", "x-gzip;Q=0.1", ";;,,q=", "\"\";q=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Negotiate([]string{s})
		if got != Identity && !strings.Contains(strings.ToLower(s), got.String()) && !strings.Contains(s, "*") {
			t.Errorf("Negotiate(%q) = %v, which it does not name", s, got)
		}
		// One line or the same elements over several lines: the same.
		if again := Negotiate(strings.Split(s, ",")); again != got {
			t.Errorf("Negotiate(%q) = %v, split into lines %v", s, got, again)
		}
		NoneMatch([]string{s}, `"abc"`)
	})
}

// TestEncode_Collision: a body whose hash is another's is a miss, never
// the other body's bytes.
func TestEncode_Collision(t *testing.T) {
	e := New(0, 0)
	k := key{42, Gzip}
	e.put(k, []byte("body A"), []byte("coded A"))
	if got, ok := e.get(k, []byte("body B")); ok {
		t.Fatalf("body B got %q", got)
	}
	e.put(k, []byte("body B"), []byte("coded B"))
	if got, ok := e.get(k, []byte("body B")); !ok || string(got) != "coded B" {
		t.Errorf("body B: %q %v", got, ok)
	}
	if n, b := e.Len(); n != 1 || b != e.lru.Front().Value.(*entry).size() {
		t.Errorf("%d entries, %d bytes", n, b)
	}
}

// TestEncode_HeldWithinBound: what the cache holds stays within its bound,
// as counted and as the heap has it, with bodies just over 32 KiB, whose
// copies the allocator rounds up to 40.
func TestEncode_HeldWithinBound(t *testing.T) {
	e := New(0, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	before := liveHeap()
	for range 50 {
		body := make([]byte, 33000) // random: the coded body is as large
		for i := range body {
			body[i] = byte(rng.Uint32())
		}
		e.Encode(body, Gzip)
	}
	held := liveHeap() - before
	slices := 0
	for el := e.lru.Front(); el != nil; el = el.Next() {
		slices += cap(el.Value.(*entry).body) + cap(el.Value.(*entry).data)
	}
	n, counted := e.Len()
	if n < 5 || counted > e.maxBytes || slices > counted || held > int64(e.maxBytes) {
		t.Errorf("%d entries, counted %d bytes, their slices' capacity %d, %d bytes more in the heap; the bound is %d", n, counted, slices, held, e.maxBytes)
	}
}

// liveHeap is the bytes the heap holds, garbage collected (twice: what
// pools held goes at the second).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkCode: coding a 20 KiB JSON body once, what a cache miss costs.
func BenchmarkCode(b *testing.B) {
	body := []byte(strings.Repeat(`{"field_1":{"type":"text","label":"Field 1 of group 2","placeholder":"…","maxlength":80}},`, 220))
	e := New(0, 0)
	for _, c := range []Coding{Brotli, Zstd, Gzip} {
		b.Run(c.String(), func(b *testing.B) {
			for b.Loop() {
				e.code(body, c)
			}
		})
	}
}

// TestTagList: an entity-tag list split as If-Match and If-None-Match
// carry it.
func TestTagList(t *testing.T) {
	for in, want := range map[string][]string{
		`"a"`:                   {`"a"`},
		` "a" , W/"b",  "c,d" `: {`"a"`, `W/"b"`, `"c,d"`},
		`*`:                     {`*`},
		`,,"x",`:                {`"x"`},
		`"unterminated`:         {`"unterminated`},
		`W/"w", bare, "q"`:      {`W/"w"`, `bare`, `"q"`},
	} {
		if got := TagList(in); !reflect.DeepEqual(got, want) {
			t.Errorf("TagList(%q) = %q, want %q", in, got, want)
		}
	}
}
