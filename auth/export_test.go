package auth

// Fill takes all of b until release gives it back: the checks that need
// memory meanwhile wait, as behind checks already running.
func (b *MemoryBudget) Fill() (release func()) {
	if err := b.sem.Acquire(bg.ctx, b.kib); err != nil {
		panic(err)
	}
	return func() { b.sem.Release(b.kib) }
}
