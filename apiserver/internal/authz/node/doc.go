// Package node is the Node authorizer: a kubelet (user system:node:<name> in
// group system:nodes) may read the secrets, configmaps, persistent volume
// claims and volumes, and mint the service account tokens, that pods bound
// to its node use, and may write only its own Node, node Lease, CSINode and
// its pods' status. Everything else a kubelet needs comes from the static
// node rules of package bootstrappolicy. Relationships are read from
// informer indexes kept by object reference.
package node
