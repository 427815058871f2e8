package auth

import "time"

// Fill takes all of b until release gives it back: the checks that need
// memory meanwhile wait, as behind checks already running.
func (b *MemoryBudget) Fill() (release func()) {
	if err := b.sem.Acquire(bg.ctx, b.kib); err != nil {
		panic(err)
	}
	return func() { b.sem.Release(b.kib) }
}

// SetWait sets how long a check waits for memory before it is answered
// busy.
func (b *MemoryBudget) SetWait(d time.Duration) { b.wait = d }
