package contentcoding

import (
	"bytes"
	"container/list"
	"hash/maphash"
	"runtime"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Levels chosen for speed: each is its library's fast end, a few times
// faster than the default at a few percent more bytes on JSON; a body is
// coded once per change (the cache), but a first request, or a body that
// changes often, pays for it in line.
const (
	brotliLevel = 4
	gzipLevel   = gzip.BestSpeed + 4 // 5
	zstdLevel   = zstd.SpeedDefault
)

// Bounds of an Encoder.
const (
	// MinSize: a body smaller than this goes identity; coding it would save
	// little and cost a cache entry.
	MinSize = 1 << 10
	// MaxSize: a larger body goes identity, streamed; nothing of that size
	// is held twice in memory. A body coded is one the default cache keeps
	// (an eighth of it, the body and its coded bytes together), so that no
	// body is coded again for every request.
	MaxSize = 2 << 20
	// DefaultMaxEntries and DefaultMaxBytes bound the cache of coded
	// bodies: the bodies any client can ask for (each _jsonp callback is
	// another body) only ever replace each other within them.
	DefaultMaxEntries = 512
	DefaultMaxBytes   = 32 << 20
)

// Encoder codes bodies and keeps the result, keyed by the coding and the
// body, least recently used out first. It is safe for concurrent use.
//
// A body is found by a seeded hash (maphash: a few times faster than
// SHA-256, which would cost a hit more than the rest of the answer; the
// seed, random per Encoder, keeps clients from choosing bodies that
// collide) and then compared whole with the one kept, so that a collision
// is a miss and never another body's bytes: the cache serves every user.
type Encoder struct {
	maxEntries, maxBytes int
	seed                 maphash.Seed
	zstd                 *zstd.Encoder
	brotli, gzip         sync.Pool

	mu    sync.Mutex
	lru   *list.List // of *entry, most recent first
	index map[key]*list.Element
	bytes int
}

type key struct {
	sum    uint64
	coding Coding
}

type entry struct {
	key  key
	body []byte // a copy of the identity body
	data []byte
}

// New is an Encoder whose cache holds at most maxEntries coded bodies of
// maxBytes in all (the defaults when 0).
func New(maxEntries, maxBytes int) *Encoder {
	if maxEntries <= 0 {
		maxEntries = DefaultMaxEntries
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	// EncodeAll with these options never fails; the error is the options'.
	z, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstdLevel), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithLowerEncoderMem(true))
	if err != nil {
		panic("contentcoding: zstd options: " + err.Error())
	}
	return &Encoder{maxEntries: maxEntries, maxBytes: maxBytes, seed: maphash.MakeSeed(), zstd: z, lru: list.New(), index: map[key]*list.Element{}}
}

// Encode is body coded with c, from the cache when this body was coded
// before. The result is shared: it must not be modified. Identity, or a
// body outside MinSize..MaxSize, is body itself.
func (e *Encoder) Encode(body []byte, c Coding) []byte {
	if c == Identity || !Codes(len(body)) {
		return body
	}
	k := key{maphash.Bytes(e.seed, body), c}
	if data, ok := e.get(k, body); ok {
		return data
	}
	// The coder's buffer was grown for a guess, up to twice what it
	// holds: what is kept is cut to its length (its capacity is what the
	// cache counts).
	data := bytes.Clone(e.code(body, c))
	e.put(k, body, data)
	return data
}

// Codes tells whether a body of n bytes is coded when the client accepts
// a coding: the same for every coding, so that which entity tag a body has
// depends on its size and the negotiated coding only.
func Codes(n int) bool { return n >= MinSize && n <= MaxSize }

func (e *Encoder) code(body []byte, c Coding) []byte {
	var out bytes.Buffer
	out.Grow(len(body)/4 + 64)
	switch c {
	case Zstd:
		return e.zstd.EncodeAll(body, make([]byte, 0, len(body)/4+64))
	case Brotli:
		w, _ := e.brotli.Get().(*brotli.Writer)
		if w == nil {
			w = brotli.NewWriterLevel(&out, brotliLevel)
		} else {
			w.Reset(&out)
		}
		// Writes to a bytes.Buffer do not fail.
		w.Write(body)
		w.Close()
		e.brotli.Put(w)
	case Gzip:
		w, _ := e.gzip.Get().(*gzip.Writer)
		if w == nil {
			w, _ = gzip.NewWriterLevel(&out, gzipLevel) // a valid level
		} else {
			w.Reset(&out)
		}
		w.Write(body)
		w.Close()
		e.gzip.Put(w)
	}
	return out.Bytes()
}

func (e *Encoder) get(k key, body []byte) ([]byte, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	el, ok := e.index[k]
	if !ok || !bytes.Equal(el.Value.(*entry).body, body) {
		return nil, false
	}
	e.lru.MoveToFront(el)
	return el.Value.(*entry).data, true
}

// put keeps body's data, the two counted, unless they alone would take
// more than an eighth of the cache, evicting the least recently used to
// stay within the bounds. A colliding body replaces the one kept.
func (e *Encoder) put(k key, body, data []byte) {
	en := &entry{key: k, body: bytes.Clone(body), data: data}
	if en.size() > e.maxBytes/8 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if el, ok := e.index[k]; ok {
		if bytes.Equal(el.Value.(*entry).body, body) {
			return // coded meanwhile by a concurrent request
		}
		e.remove(el)
	}
	e.index[k] = e.lru.PushFront(en)
	e.bytes += en.size()
	for e.lru.Len() > e.maxEntries || e.bytes > e.maxBytes {
		e.remove(e.lru.Back())
	}
}

func (e *Encoder) remove(el *list.Element) {
	old := e.lru.Remove(el).(*entry)
	delete(e.index, old.key)
	e.bytes -= old.size()
}

// entryOverhead bounds what an entry holds besides its bytes: the entry,
// its list element and its slot in the index, about 170 bytes.
const entryOverhead = 256

// size is what the entry holds: the capacity of its slices, which the
// allocator rounds up (bytes.Clone: by up to a quarter, just over 32
// KiB), not their length.
func (en *entry) size() int { return cap(en.body) + cap(en.data) + entryOverhead }

// Len is the number of coded bodies kept and the bytes they hold
// (identity and coded, as counted against the bound).
func (e *Encoder) Len() (entries, bytes int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lru.Len(), e.bytes
}
