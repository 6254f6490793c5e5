// Package pullsecrets turns a pod's imagePullSecrets into the CRI
// credentials an image pull is tried with, matched to the image's
// registry as upstream's keyring matches them.
package pullsecrets
