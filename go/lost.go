// go/lost.go: the heartbeat's lost callback, called from libfence's own
// heartbeat thread (a C thread: cgo attaches it to the Go runtime for the
// call).  It only closes a channel, as fence.h asks of a lost callback.

package pgfence

/*
#include <stdint.h>
*/
import "C"

import "runtime/cgo"

//export pgfenceLost
func pgfenceLost(h C.uintptr_t) {
	if s, ok := cgo.Handle(h).Value().(*lostSignal); ok {
		s.fire()
	}
}
