package service

// The constructors that only New calls, for this package's external tests.
var (
	NewElector     = newElector
	NewLimiter     = newLimiter
	NewLoop        = newLoop
	NewMetrics     = newMetrics
	NewNodeWatcher = newNodeWatcher
	NewRequests    = newRequests
)
