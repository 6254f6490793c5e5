package defaults

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Defaults of API Priority and Fairness objects.
const (
	defaultMatchingPrecedence       int32 = 1000
	defaultNominalConcurrencyShares int32 = 30
	defaultQueues                   int32 = 64
	defaultHandSize                 int32 = 8
	defaultQueueLengthLimit         int32 = 50
)

// FlowSchema gives a schema without a precedence the middle precedence 1000
// (0 is not a valid precedence, so it means unset).
func FlowSchema(fs *flowcontrolv1.FlowSchema) {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = defaultMatchingPrecedence
	}
}

// PriorityLevelConfiguration fills the concurrency shares and lendable
// percentage of an exempt or limited level and the queuing parameters of a
// limited level that queues.
func PriorityLevelConfiguration(plc *flowcontrolv1.PriorityLevelConfiguration) {
	if e := plc.Spec.Exempt; e != nil {
		if e.NominalConcurrencyShares == nil {
			e.NominalConcurrencyShares = new(int32(0))
		}
		if e.LendablePercent == nil {
			e.LendablePercent = new(int32(0))
		}
	}
	l := plc.Spec.Limited
	if l == nil {
		return
	}
	// In v1 an explicit 0 is kept: it is how a level asks for no seats of
	// its own.
	if l.NominalConcurrencyShares == nil {
		l.NominalConcurrencyShares = new(defaultNominalConcurrencyShares)
	}
	if l.LendablePercent == nil {
		l.LendablePercent = new(int32(0))
	}
	if q := l.LimitResponse.Queuing; q != nil {
		if q.HandSize == 0 {
			q.HandSize = defaultHandSize
		}
		if q.Queues == 0 {
			q.Queues = defaultQueues
		}
		if q.QueueLengthLimit == 0 {
			q.QueueLengthLimit = defaultQueueLengthLimit
		}
	}
}
