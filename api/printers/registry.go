package printers

import (
	"fmt"
	"reflect"
)

// printers is the one table of kinds with their own columns, one entry per
// hub Go type; lists of these types are printed item by item. A new group
// (rbac, admissionregistration, certificates) adds its entries here.
// Kinds left out (LimitRange) get the default Name and Created At columns,
// as they do upstream.
var printers = []printer{
	// core
	withConditions(kind(podColumns, podCells), podConditions),
	kind(podTemplateColumns, podTemplateCells),
	kind(replicationControllerColumns, replicationControllerCells),
	kind(serviceColumns, serviceCells),
	kind(endpointsColumns, endpointsCells),
	kind(nodeColumns, nodeCells),
	kind(namespaceColumns, namespaceCells),
	kind(eventColumns, eventCells),
	kind(configMapColumns, configMapCells),
	kind(secretColumns, secretCells),
	kind(serviceAccountColumns, serviceAccountCells),
	kind(persistentVolumeColumns, persistentVolumeCells),
	kind(persistentVolumeClaimColumns, persistentVolumeClaimCells),
	kind(resourceQuotaColumns, resourceQuotaCells),
	// apps
	kind(deploymentColumns, deploymentCells),
	kind(replicaSetColumns, replicaSetCells),
	kind(statefulSetColumns, statefulSetCells),
	kind(daemonSetColumns, daemonSetCells),
	kindErr(controllerRevisionColumns, controllerRevisionCells),
	// batch
	kind(jobColumns, jobCells),
	kind(cronJobColumns, cronJobCells),
	// autoscaling
	kind(horizontalPodAutoscalerColumns, horizontalPodAutoscalerCells),
	kind(scaleColumns, scaleCells),
	// coordination, scheduling, policy, node
	kind(leaseColumns, leaseCells),
	kind(priorityClassColumns, priorityClassCells),
	kind(podDisruptionBudgetColumns, podDisruptionBudgetCells),
	kind(runtimeClassColumns, runtimeClassCells),
	// discovery, networking
	kind(endpointSliceColumns, endpointSliceCells),
	kind(ingressColumns, ingressCells),
	kind(ingressClassColumns, ingressClassCells),
	kind(networkPolicyColumns, networkPolicyCells),
	kind(serviceCIDRColumns, serviceCIDRCells),
	kind(ipAddressColumns, ipAddressCells),
	// storage
	kind(storageClassColumns, storageClassCells),
	kind(csiDriverColumns, csiDriverCells),
	kind(csiNodeColumns, csiNodeCells),
	kind(volumeAttachmentColumns, volumeAttachmentCells),
	// flowcontrol
	sortedBy(kind(flowSchemaColumns, flowSchemaCells), flowSchemaBefore),
	kind(priorityLevelConfigurationColumns, priorityLevelConfigurationCells),
	// admissionregistration
	kind(webhookConfigurationColumns, validatingWebhookConfigurationCells),
	kind(webhookConfigurationColumns, mutatingWebhookConfigurationCells),
	kind(validatingAdmissionPolicyColumns, validatingAdmissionPolicyCells),
	kind(policyBindingColumns, validatingAdmissionPolicyBindingCells),
	kind(mutatingAdmissionPolicyColumns, mutatingAdmissionPolicyCells),
	kind(policyBindingColumns, mutatingAdmissionPolicyBindingCells),
	// certificates
	kind(certificateSigningRequestColumns, certificateSigningRequestCells),
	kind(clusterTrustBundleColumns, clusterTrustBundleCells),
	// resource
	kind(deviceClassColumns, deviceClassCells),
	kind(resourceClaimColumns, resourceClaimCells),
	kind(resourceClaimTemplateColumns, resourceClaimTemplateCells),
	kind(resourceSliceColumns, resourceSliceCells),
	// rbac
	kind(roleBindingColumns, roleBindingCells),
	kind(clusterRoleBindingColumns, clusterRoleBindingCells),
}

// byType indexes printers by the Go type they print.
var byType = index(printers)

func index(ps []printer) map[reflect.Type]printer {
	m := make(map[reflect.Type]printer, len(ps))
	for _, p := range ps {
		if _, dup := m[p.typ]; dup {
			panic(fmt.Sprintf("printers: %s registered twice", p.typ))
		}
		m[p.typ] = p
	}
	return m
}
