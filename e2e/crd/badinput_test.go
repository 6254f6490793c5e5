package crd_test

import (
	"strings"
	"testing"
)

// gadgetCRD has an OpenAPI limit and a CEL rule with a message to break.
const gadgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.bad.e2e.trireme.dev}
spec:
  group: bad.e2e.trireme.dev
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - {rule: "self.min <= self.max", message: "min must not exceed max"}
            properties:
              size: {type: integer, maximum: 10}
              min: {type: integer}
              max: {type: integer}
`

// TestBadInput checks that kubectl users get field paths and rule messages
// back for an invalid CRD and for custom resources their schema refuses.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		want           []string
	}{
		{"invalid CRD schema", "size: {type: integer, maximum: 10}", "size: {maximum: 10}",
			[]string{"spec.validation.openAPIV3Schema.properties[spec].properties[size].type: Required value"}},
		{"CEL rule that does not compile", "self.min <= self.max", "self.min <=",
			[]string{"spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value", "compilation failed"}},
		{"CEL rule on an unknown field", "self.min <= self.max", "self.min <= self.maximum",
			[]string{"spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value", "undefined field 'maximum'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := srv.KubectlStdin(t, strings.Replace(gadgetCRD, tc.from, tc.to, 1), "apply", "-f", "-")
			if res.ExitCode == 0 {
				t.Fatalf("invalid CRD accepted: %s", res)
			}
			for _, want := range tc.want {
				if !strings.Contains(res.Stderr, want) {
					t.Errorf("refusal lacks %q:\n%s", want, res.Stderr)
				}
			}
		})
	}

	kubectlStdinOK(t, gadgetCRD, "apply", "-f", "-")
	kubectlOK(t, "wait", "--for", "condition=Established", "--timeout", "60s", "crd/gadgets.bad.e2e.trireme.dev")
	ns := newNamespace(t, "badinput")
	gadget := func(spec string) string {
		return "apiVersion: bad.e2e.trireme.dev/v1\nkind: Gadget\nmetadata: {name: g}\nspec: " + spec + "\n"
	}

	for _, tc := range []struct {
		name, spec string
		want       []string
	}{
		{"schema violation", "{size: 11}", []string{"spec.size: Invalid value: 11", "should be less than or equal to 10"}},
		{"wrong type", `{size: "big"}`, []string{`spec.size: Invalid value: "string"`, `must be of type integer`}},
		{"CEL rule", "{min: 5, max: 1}", []string{"spec: Invalid value", "min must not exceed max"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := srv.KubectlStdin(t, gadget(tc.spec), "apply", "-n", ns, "-f", "-")
			if res.ExitCode == 0 {
				t.Fatalf("accepted: %s", res)
			}
			for _, want := range tc.want {
				if !strings.Contains(res.Stderr, want) {
					t.Errorf("refusal lacks %q:\n%s", want, res.Stderr)
				}
			}
		})
	}
	kubectlStdinOK(t, gadget("{size: 3, min: 1, max: 2}"), "apply", "-n", ns, "-f", "-")
}
