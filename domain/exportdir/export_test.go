package exportdir

// SetLimits lowers MaxFiles and MaxDirBytes for a test, until restore.
func SetLimits(files, dirBytes int64) (restore func()) {
	f, d := maxFiles, maxDirBytes
	maxFiles, maxDirBytes = files, dirBytes
	return func() { maxFiles, maxDirBytes = f, d }
}
