package wpconfig

import (
	"fmt"
	"unsafe"
)

// What one reading of a configuration may spend: wp-config.php, every file
// it includes, the code it eval()s, its .env files and its NAME_FILE
// secrets together. A configuration file needs a few thousand steps and a
// few hundred kilobytes. The bounds are far above that: the bytes are
// those the steps bounded before (64 a step), enough for 64 files of 1 MiB
// or for the densest file of 1 MiB parsed. They are below what would hurt
// the sidecar: its default memory limit is 256 MiB, and most of what is
// charged is garbage by the time the next is.
//
// Every charge adds up and nothing is given back, so the sums bound time
// and memory alike whatever the code does: copies of a string count as
// often as they are made, and code parsed again counts again. Each charge
// is made before what it pays for is built, or right after a step bounded
// on its own: reading one file (at most MaxFileBytes), lexing one (at most
// lexLimit tokens), building one string (at most maxStringBytes).
const (
	maxSteps = 2000000   // expressions and statements evaluated, files checked (fsCost each), 64 bytes of a string scanned
	maxBytes = 128 << 20 // strings built, files read, code parsed (its text, tokens and syntax nodes), array elements
	maxElems = 1 << 20   // array elements, tokens and syntax nodes
	// maxDepth bounds the evaluator's recursion: nested expressions, a
	// chain of operators (a|b|c… nests to the left), blocks, includes and
	// eval()s, all together. A level costs up to ~2.5 KB of stack, so the
	// stack stays under a few MiB; a configuration nests a few levels.
	maxDepth = 1000
	// maxArrayDepth bounds arrays inside arrays.
	maxArrayDepth = 64
	// fsCost is the steps a look at the file system costs (file_exists(),
	// an include's path, each .env candidate).
	fsCost = 64
)

// What lexing and parsing allocate for a token, a syntax node and a
// statement, and what an array element takes, as charged. A slice of
// tokens grows by a quarter at a time once long, so that its copies add up
// to about five times its final length: a token costs ~310 bytes, a node
// or a statement ~150 (TestParseCost measures them).
var (
	tokenCost = 6 * int(unsafe.Sizeof(token{}))
	nodeCost  = int(unsafe.Sizeof(node{})) + 16
	stmtCost  = 2 * int(unsafe.Sizeof(stmt{}))
	elemBytes = int(unsafe.Sizeof(value{}) + unsafe.Sizeof(""))
)

// budget is what is left of one reading's bounds. The first bound passed
// is err, and stays: everything after it fails.
type budget struct {
	steps, bytes, elems int64
	depth               int
	err                 error
}

func (b *budget) fail(format string, a ...any) bool {
	if b.err == nil {
		b.err = fmt.Errorf(format, a...)
	}
	return false
}

// step charges steps of evaluation.
func (b *budget) step(n int) bool {
	if b.err != nil {
		return false
	}
	if b.steps += int64(n); b.steps > maxSteps {
		return b.fail("more than %d steps of evaluation", maxSteps)
	}
	return true
}

// alloc charges bytes about to be allocated.
func (b *budget) alloc(n int) bool {
	if b.err != nil {
		return false
	}
	if b.bytes += int64(n); b.bytes > maxBytes {
		return b.fail("more than %d MiB of strings, arrays and code", maxBytes>>20)
	}
	return true
}

// elements charges n elements (array elements, tokens, nodes) of size
// bytes each.
func (b *budget) elements(n, size int) bool {
	if b.err != nil {
		return false
	}
	if b.elems += int64(n); b.elems > maxElems {
		return b.fail("more than %d array elements and pieces of code", maxElems)
	}
	return b.alloc(n * size)
}

// enter goes one level deeper; leave comes back.
func (b *budget) enter() bool {
	b.depth++
	if b.depth > maxDepth {
		return b.fail("expressions, blocks and includes nested more than %d deep", maxDepth)
	}
	return b.err == nil
}

func (b *budget) leave() { b.depth-- }
