package store

// InterpolationSafe is interpolationSafe, for the external tests.
var InterpolationSafe = interpolationSafe
