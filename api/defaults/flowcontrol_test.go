package defaults

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Expected values: upstream pkg/apis/flowcontrol/v1/defaults.go
// (FlowSchemaDefaultMatchingPrecedence 1000, the
// PriorityLevelConfigurationDefault* constants, SetDefaults_Exempt- and
// SetDefaults_LimitedPriorityLevelConfiguration, SetDefaults_QueuingConfiguration).

func TestFlowSchema(t *testing.T) {
	runDefaulting(t, FlowSchema, []defaultingCase[flowcontrolv1.FlowSchema]{
		{name: "precedence 1000", in: &flowcontrolv1.FlowSchema{}, want: &flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: 1000}}},
		{
			name: "explicit precedence kept",
			in:   &flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: 2}},
			want: &flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: 2}},
		},
	})
}

func TestPriorityLevelConfiguration(t *testing.T) {
	runDefaulting(t, PriorityLevelConfiguration, []defaultingCase[flowcontrolv1.PriorityLevelConfiguration]{
		{
			name: "limited with queuing",
			in: &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
				Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{
					Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 16},
				}},
			}},
			want: &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
				Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
					NominalConcurrencyShares: new(int32(30)),
					LendablePercent:          new(int32(0)),
					LimitResponse: flowcontrolv1.LimitResponse{
						Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 16, HandSize: 8, QueueLengthLimit: 50},
					},
				},
			}},
		},
		{
			name: "limited with zero shares and reject",
			in: &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
				Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
					NominalConcurrencyShares: new(int32(0)),
					LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
				},
			}},
			want: &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
				Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
					NominalConcurrencyShares: new(int32(0)),
					LendablePercent:          new(int32(0)),
					LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
				},
			}},
		},
		{
			name: "exempt",
			in: &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
				Type: flowcontrolv1.PriorityLevelEnablementExempt, Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{},
			}},
			want: &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
				Type: flowcontrolv1.PriorityLevelEnablementExempt, Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{
					NominalConcurrencyShares: new(int32(0)), LendablePercent: new(int32(0)),
				},
			}},
		},
	})
}
