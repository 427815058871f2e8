// Package kubernetes checks the manifests of deploy/kubernetes by decoding
// them strictly into the Kubernetes API's types (a module of its own, so
// that the project's go.mod stays small).
package kubernetes

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// strict decodes YAML into v, refusing fields the type does not have.
func strict(t *testing.T, doc []byte, v any) {
	t.Helper()
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
}

// objects decodes every document of the manifests by kind.
func objects(t *testing.T) (deps []appsv1.Deployment, svcs []corev1.Service, secrets []corev1.Secret, pdbs []policyv1.PodDisruptionBudget) {
	files, _ := filepath.Glob("*.yaml")
	for _, f := range files {
		if f == "bitnami-values.yaml" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			var head struct{ Kind, APIVersion string }
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			switch head.APIVersion + " " + head.Kind {
			case "apps/v1 Deployment":
				var d appsv1.Deployment
				strict(t, doc, &d)
				deps = append(deps, d)
			case "v1 Service":
				var s corev1.Service
				strict(t, doc, &s)
				svcs = append(svcs, s)
			case "v1 Secret":
				var s corev1.Secret
				strict(t, doc, &s)
				secrets = append(secrets, s)
			case "policy/v1 PodDisruptionBudget":
				var p policyv1.PodDisruptionBudget
				strict(t, doc, &p)
				pdbs = append(pdbs, p)
			default:
				t.Fatalf("%s: a document of kind %q %q the test does not check", f, head.APIVersion, head.Kind)
			}
		}
	}
	return
}

func flag(args []string, name string) string {
	i := slices.Index(args, name)
	if i < 0 || i+1 >= len(args) {
		return ""
	}
	return args[i+1]
}

// checkSidecar: what the sidecar container needs to work beside PHP.
func checkSidecar(t *testing.T, c corev1.Container, phpPort int32) time.Duration {
	t.Helper()
	if got := flag(c.Args, "--upstream"); got != "http://127.0.0.1:"+itoa(phpPort) {
		t.Errorf("upstream %q, want PHP's container on the pod's loopback (port %d)", got, phpPort)
	}
	admin := flag(c.Args, "--admin-listen")
	if !strings.HasPrefix(admin, "0.0.0.0:") {
		t.Errorf("--admin-listen %q: the kubelet's probes need it on the pod's address", admin)
	}
	adminPort := port(c, c.ReadinessProbe.HTTPGet.Port)
	if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" || itoa(adminPort) != strings.TrimPrefix(admin, "0.0.0.0:") ||
		port(c, c.LivenessProbe.HTTPGet.Port) != adminPort {
		t.Errorf("probes %+v %+v, admin %s", c.ReadinessProbe.HTTPGet, c.LivenessProbe.HTTPGet, admin)
	}
	sc := c.SecurityContext
	if sc == nil || !*sc.RunAsNonRoot || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("security context %+v", sc)
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v", c.Resources)
	}
	delay, err1 := time.ParseDuration(flag(c.Args, "--shutdown-delay"))
	timeout, err2 := time.ParseDuration(flag(c.Args, "--shutdown-timeout"))
	if err1 != nil || err2 != nil {
		t.Fatalf("shutdown flags: %v %v", err1, err2)
	}
	return delay + timeout
}

// port is a probe's port as a number, by name or number.
func port(c corev1.Container, p intstr.IntOrString) int32 {
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	return -1
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func TestManifests(t *testing.T) {
	deps, svcs, secrets, pdbs := objects(t)
	if len(deps) != 1 || len(secrets) != 1 || len(pdbs) != 1 || len(svcs) != 2 {
		t.Fatalf("%d deployments, %d services, %d secrets, %d PDBs", len(deps), len(svcs), len(secrets), len(pdbs))
	}
	d := deps[0]
	spec := d.Spec.Template.Spec
	var php, side corev1.Container
	for _, c := range spec.Containers {
		switch c.Name {
		case "wordpress":
			php = c
		case "wpsidecar":
			side = c
		}
	}
	need := checkSidecar(t, side, php.Ports[0].ContainerPort)
	if grace := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second; grace <= need {
		t.Errorf("terminationGracePeriodSeconds %s, not above shutdown-delay + shutdown-timeout %s", grace, need)
	}
	if php.Lifecycle == nil || php.Lifecycle.PreStop == nil || php.Lifecycle.PreStop.Sleep == nil || php.Lifecycle.PreStop.Sleep.Seconds < 5 {
		t.Errorf("PHP's container does not outlive the sidecar's lame-duck phase: %+v", php.Lifecycle)
	}
	// The database settings: the same Secret and keys as the official
	// image's variables (the keys and salts: TestKeysAndSalts).
	from := func(c corev1.Container) map[string]string {
		m := map[string]string{}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				m[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
			}
		}
		return m
	}
	phpEnv, sideEnv := from(php), from(side)
	for _, k := range []string{"WORDPRESS_DB_HOST", "WORDPRESS_DB_USER", "WORDPRESS_DB_PASSWORD", "WORDPRESS_DB_NAME"} {
		if phpEnv[k] == "" || phpEnv[k] != sideEnv[k] {
			t.Errorf("%s: PHP's %q, the sidecar's %q", k, phpEnv[k], sideEnv[k])
		}
		name, key, _ := strings.Cut(phpEnv[k], "/")
		if name != secrets[0].Name || secrets[0].StringData[key] == "" {
			t.Errorf("%s: %s/%s is not in the Secret", k, name, key)
		}
	}
	// The Service sends traffic to the sidecar; the PDB and the Service
	// select the Deployment's pods.
	labels := d.Spec.Template.Labels
	for _, s := range svcs {
		if s.Name != "wordpress" {
			continue
		}
		if tp := s.Spec.Ports[0].TargetPort; port(side, tp) != 8080 {
			t.Errorf("the Service targets %v, not the sidecar", tp)
		}
		for k, v := range s.Spec.Selector {
			if labels[k] != v {
				t.Errorf("the Service's selector %s=%s misses the pods", k, v)
			}
		}
	}
	for k, v := range pdbs[0].Spec.Selector.MatchLabels {
		if labels[k] != v {
			t.Errorf("the PDB's selector %s=%s misses the pods", k, v)
		}
	}
}

// TestKeysAndSalts: every one of WordPress's eight keys and salts is in
// the Secret and reaches both containers, under the official image's
// variable (which the sidecar reads too), from that Secret. A key one
// container lacks is one the official image makes up in each pod apart.
func TestKeysAndSalts(t *testing.T) {
	deps, _, secrets, _ := objects(t)
	if len(deps) != 1 || len(secrets) != 1 {
		t.Fatalf("%d deployments, %d secrets", len(deps), len(secrets))
	}
	secret := secrets[0]
	// env is a container's variables as Kubernetes sets them (the last
	// entry of a name wins): "secret/key" from a Secret, else "=value".
	env := func(name string) map[string]string {
		m := map[string]string{}
		for _, c := range deps[0].Spec.Template.Spec.Containers {
			if c.Name != name {
				continue
			}
			for _, e := range c.Env {
				switch {
				case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
					m[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
				default:
					m[e.Name] = "=" + e.Value
				}
			}
			return m
		}
		t.Fatalf("no container %q", name)
		return nil
	}
	containers := map[string]map[string]string{"wordpress": env("wordpress"), "wpsidecar": env("wpsidecar")}
	for _, tc := range []struct{ variable, key string }{
		{"WORDPRESS_AUTH_KEY", "auth-key"},
		{"WORDPRESS_SECURE_AUTH_KEY", "secure-auth-key"},
		{"WORDPRESS_LOGGED_IN_KEY", "logged-in-key"},
		{"WORDPRESS_NONCE_KEY", "nonce-key"},
		{"WORDPRESS_AUTH_SALT", "auth-salt"},
		{"WORDPRESS_SECURE_AUTH_SALT", "secure-auth-salt"},
		{"WORDPRESS_LOGGED_IN_SALT", "logged-in-salt"},
		{"WORDPRESS_NONCE_SALT", "nonce-salt"},
	} {
		if v, ok := secret.StringData[tc.key]; !ok || v == "" {
			t.Errorf("%s: the Secret %s has no %s", tc.variable, secret.Name, tc.key)
		}
		for _, c := range []string{"wordpress", "wpsidecar"} {
			if got, want := containers[c][tc.variable], secret.Name+"/"+tc.key; got != want {
				t.Errorf("%s: the %s container's is %q, want %q", tc.variable, c, got, want)
			}
		}
	}
}

// bitnamiSidecar decodes bitnami-values.yaml: its one sidecar (strictly,
// as a Kubernetes container) and its terminationGracePeriodSeconds.
func bitnamiSidecar(t *testing.T) (corev1.Container, int64) {
	t.Helper()
	b, err := os.ReadFile("bitnami-values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Sidecars []json.RawMessage `json:"sidecars"`
		Grace    int64             `json:"terminationGracePeriodSeconds"`
	}
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	if len(values.Sidecars) != 1 {
		t.Fatalf("%d sidecars", len(values.Sidecars))
	}
	var c corev1.Container
	dec := json.NewDecoder(bytes.NewReader(values.Sidecars[0]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c, values.Grace
}

// TestBitnamiValues: the values add a sidecar the chart can take
// (Kubernetes containers, strictly) that works beside the chart's Apache.
func TestBitnamiValues(t *testing.T) {
	c, grace := bitnamiSidecar(t)
	need := checkSidecar(t, c, 8080) // the chart's containerPorts.http
	if time.Duration(grace)*time.Second <= need {
		t.Errorf("grace %ds, not above %s", grace, need)
	}
	if got := flag(c.Args, "--wp-config"); got != "/bitnami/wordpress/wp-config.php" || len(c.VolumeMounts) != 1 || !c.VolumeMounts[0].ReadOnly {
		t.Errorf("wp-config %q, mounts %+v", got, c.VolumeMounts)
	}
	// The database settings, keys and salts come from that file, as PHP's
	// do: a WORDPRESS_* variable would win over it (envFrom may hold one).
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "WORDPRESS_") {
			t.Errorf("the sidecar's variable %s would win over the chart's wp-config.php", e.Name)
		}
	}
	if len(c.EnvFrom) != 0 {
		t.Errorf("the sidecar's envFrom %+v may hold WORDPRESS_* variables, which would win over the chart's wp-config.php", c.EnvFrom)
	}
	_, svcs, _, _ := objects(t)
	for _, s := range svcs {
		if s.Name == "wordpress-wpsidecar" && port(c, s.Spec.Ports[0].TargetPort) != 8081 {
			t.Errorf("bitnami-service.yaml targets %v, not the sidecar", s.Spec.Ports[0].TargetPort)
		}
	}
}

// TestImage: nothing publishes the sidecar's image, so both manifests name
// the placeholder docs/deploy/kubernetes.md builds and pushes, and its
// kustomize example maps that very name.
func TestImage(t *testing.T) {
	doc, err := os.ReadFile("../../docs/deploy/kubernetes.md")
	if err != nil {
		t.Fatal(err)
	}
	one := func(pattern string) string {
		m := regexp.MustCompile(pattern).FindAllSubmatch(doc, -1)
		if len(m) != 1 {
			t.Fatalf("the doc has %d lines matching %s, want 1", len(m), pattern)
		}
		return string(m[0][1])
	}
	image := one(`(?m)^docker build -t (\S+) \.$`)
	if push := one(`(?m)^docker push (\S+)$`); push != image {
		t.Errorf("the doc builds %s and pushes %s", image, push)
	}
	name, _, _ := strings.Cut(image, ":")
	if mapped := one(`(?m)^  - name: (\S+)$`); mapped != name {
		t.Errorf("the doc's kustomize example maps %s, not %s", mapped, name)
	}
	deps, _, _, _ := objects(t)
	i := slices.IndexFunc(deps[0].Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == "wpsidecar" })
	if i < 0 {
		t.Fatal("wordpress.yaml has no wpsidecar container")
	}
	if c := deps[0].Spec.Template.Spec.Containers[i]; c.Image != image {
		t.Errorf("wordpress.yaml's sidecar is %s, the doc builds %s", c.Image, image)
	}
	if c, _ := bitnamiSidecar(t); c.Image != image {
		t.Errorf("bitnami-values.yaml's sidecar is %s, the doc builds %s", c.Image, image)
	}
}
