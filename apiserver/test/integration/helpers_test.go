package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// requestTimeout bounds one test's calls; a healthy server answers in
// milliseconds, so hitting it means the server hung.
const requestTimeout = time.Minute

// testContext returns a context that ends with the test or after requestTimeout.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), requestTimeout)
	t.Cleanup(cancel)
	return ctx
}

var nameCounter atomic.Int64

// uniqueName returns prefix followed by a number no other call returns.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, nameCounter.Add(1))
}

// newNamespace creates a namespace for one test. Namespaces are left behind:
// the server is thrown away with its data when the package's tests end.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(testContext(t), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: uniqueName("it")},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create test namespace: %v", err)
	}
	createDefaultServiceAccount(t, client, ns.Name)
	return ns.Name
}

// createDefaultServiceAccount stands in for the controller-manager, which
// these tests do not run: ServiceAccount admission refuses pods until their
// namespace has its default ServiceAccount.
func createDefaultServiceAccount(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	_, err := c.CoreV1().ServiceAccounts(ns).Create(testContext(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create default service account in %s: %v", ns, err)
	}
}

// wantStatus fails the test unless err is an API error with the HTTP code.
func wantStatus(t *testing.T, err error, code int32) *apierrors.StatusError {
	t.Helper()
	if err == nil {
		t.Fatalf("got success, want HTTP %d", code)
	}
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("got %T %v, want an API status error with HTTP %d", err, err, code)
	}
	if se.ErrStatus.Code != code {
		t.Fatalf("got HTTP %d (%s: %s), want %d", se.ErrStatus.Code, se.ErrStatus.Reason, se.ErrStatus.Message, code)
	}
	return se
}

// wantCause fails the test unless the status error names field among its causes.
func wantCause(t *testing.T, se *apierrors.StatusError, field string) {
	t.Helper()
	var fields []string
	if d := se.ErrStatus.Details; d != nil {
		for _, c := range d.Causes {
			if c.Field == field {
				return
			}
			fields = append(fields, c.Field)
		}
	}
	t.Fatalf("error %q has causes at [%s], want one at %s", se.ErrStatus.Message, strings.Join(fields, ", "), field)
}

// eventually polls cond every 50ms until it holds, for up to 20s; the
// server's informers (admission, APF) lag writes by a moment.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(testContext(t), 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not true after 20s (last error: %v)", what, last)
	}
}

// statusCode is the HTTP code of an API error, 0 for other errors.
func statusCode(err error) int32 {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Code
	}
	return 0
}
