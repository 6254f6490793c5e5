package authn

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
)

// AuthInfoConfigMap is the kube-system ConfigMap through which aggregated
// API servers learn how to authenticate requests this server forwards.
const AuthInfoConfigMap = "extension-apiserver-authentication"

// AddPostStartHooks registers the hook that publishes the client CA and
// the request-header settings in kube-system/extension-apiserver-authentication.
func (o *Options) AddPostStartHooks(srv *genericapiserver.GenericAPIServer, client kubernetes.Interface) error {
	return srv.AddPostStartHook("trireme-publish-authentication-info", func(hc genericapiserver.PostStartHookContext) error {
		data, err := o.authInfo()
		if err != nil {
			return err
		}
		var last error
		err = wait.PollUntilContextTimeout(hc, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			if last = writeConfigMap(ctx, client, data); last != nil {
				logr.FromContextOrDiscard(ctx).V(2).Info("Publishing authentication info failed, retrying", "err", last)
				return false, nil
			}
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("publish %s: %w (last error: %v)", AuthInfoConfigMap, err, last)
		}
		return nil
	})
}

// authInfo is the ConfigMap's data, in the keys and JSON-list encoding
// aggregated servers' delegated authentication reads.
func (o *Options) authInfo() (map[string]string, error) {
	data := map[string]string{}
	ca, err := os.ReadFile(o.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("read client CA: %w", err)
	}
	data["client-ca-file"] = string(ca)
	rh := o.RequestHeader
	if rh.ClientCAFile == "" {
		return data, nil
	}
	rhCA, err := os.ReadFile(rh.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("read request header CA: %w", err)
	}
	data["requestheader-client-ca-file"] = string(rhCA)
	lists := map[string][]string{
		"requestheader-username-headers":     rh.UsernameHeaders,
		"requestheader-uid-headers":          rh.UIDHeaders,
		"requestheader-group-headers":        rh.GroupHeaders,
		"requestheader-extra-headers-prefix": rh.ExtraHeaderPrefixes,
		"requestheader-allowed-names":        rh.AllowedNames,
	}
	for k, v := range lists {
		if v == nil {
			v = []string{}
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", k, err)
		}
		data[k] = string(b)
	}
	return data, nil
}

// writeConfigMap creates or overwrites the ConfigMap's data.
func writeConfigMap(ctx context.Context, client kubernetes.Interface, data map[string]string) error {
	cms := client.CoreV1().ConfigMaps(metav1.NamespaceSystem)
	cur, err := cms.Get(ctx, AuthInfoConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: AuthInfoConfigMap, Namespace: metav1.NamespaceSystem}, Data: data}
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	cur.Data = data
	_, err = cms.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}
