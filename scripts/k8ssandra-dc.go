// k8ssandra-dc: what k8ssandra-operator does first for a new K8ssandraCluster, done once with its own
// code against the cluster in $KUBECONFIG: it reads the K8ssandraCluster as the API server stored it
// (CRD defaults applied), creates the superuser Secret (secret.ReconcileSecret), builds each
// CassandraDatacenter (the steps of the reconciler's createDatacenterConfigs that need no running
// Cassandra, then cassandra.NewDatacenter), creates it and prints it as YAML.
//
// scripts/k8s-live.sh builds it against the k8ssandra-operator Go module: the operator itself cannot
// run here, as its admission webhook server listens on every interface and wants cert-manager. Not
// done, so the CassandraDatacenter differs from the operator's there: the admission check (it looks up
// the storage class through the operator's client cache); the telemetry agent's ConfigMap and volume
// (agent.Configurator), the hash annotation, datacenter priorities and skip-user-creation for later
// datacenters; the per-node ConfigMaps that carry initial tokens when num_tokens < 16; encryption
// stores, external secrets, Reaper, Stargate, Medusa, Vector, external datacenters; and everything
// after the datacenters are created. A datacenter that exists already is an error.
//
//	KUBECONFIG=... k8ssandra-dc NAMESPACE NAME
package main

import (
	"context"
	"fmt"
	"os"

	cassdcapi "github.com/k8ssandra/cass-operator/apis/cassandra/v1beta1"
	api "github.com/k8ssandra/k8ssandra-operator/apis/k8ssandra/v1alpha1"
	k8ssandractrl "github.com/k8ssandra/k8ssandra-operator/controllers/k8ssandra"
	"github.com/k8ssandra/k8ssandra-operator/pkg/cassandra"
	"github.com/k8ssandra/k8ssandra-operator/pkg/secret"
	"github.com/k8ssandra/k8ssandra-operator/pkg/telemetry"
	"github.com/k8ssandra/k8ssandra-operator/pkg/utils"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 3 {
		fail(fmt.Errorf("usage: %s NAMESPACE NAME (the K8ssandraCluster; KUBECONFIG names the cluster)", os.Args[0]))
	}
	ctx := context.Background()
	c, err := newClient()
	if err != nil {
		fail(err)
	}
	var kc api.K8ssandraCluster
	key := types.NamespacedName{Namespace: os.Args[1], Name: os.Args[2]}
	if err := c.Get(ctx, key, &kc); err != nil {
		fail(fmt.Errorf("reading K8ssandraCluster %s: %w", key, err))
	}
	if err := secret.ReconcileSecret(ctx, c, k8ssandractrl.SuperuserSecretName(&kc), utils.GetKey(&kc)); err != nil {
		fail(fmt.Errorf("the superuser secret: %w", err))
	}
	configs, err := datacenterConfigs(&kc)
	if err != nil {
		fail(err)
	}
	for _, config := range configs {
		dc, err := cassandra.NewDatacenter(utils.GetKey(&kc), config)
		if err != nil {
			fail(err)
		}
		if err := c.Create(ctx, dc); err != nil {
			fail(fmt.Errorf("creating CassandraDatacenter %s: %w", dc.Name, err))
		}
		dc.APIVersion = "cassandra.datastax.com/v1beta1"
		dc.Kind = "CassandraDatacenter"
		out, err := yaml.Marshal(dc)
		if err != nil {
			fail(err)
		}
		fmt.Printf("---\n%s", out)
	}
}

func newClient() (client.Client, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, api.AddToScheme, cassdcapi.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	config, err := ctrl.GetConfig()
	if err != nil {
		return nil, err
	}
	return client.New(config, client.Options{Scheme: scheme})
}

// datacenterConfigs follows the reconciler's createDatacenterConfigs for a new cluster without
// encryption stores, Reaper, Vector or external datacenters.
func datacenterConfigs(kc *api.K8ssandraCluster) ([]*cassandra.DatacenterConfig, error) {
	if len(kc.Spec.Cassandra.Datacenters) == 0 {
		return nil, fmt.Errorf("the K8ssandraCluster has no datacenter")
	}
	replication := cassandra.SystemReplication(cassandra.ComputeReplicationFromDatacenters(
		3, kc.Spec.ExternalDatacenters, kc.Spec.Cassandra.Datacenters[0]))
	var configs []*cassandra.DatacenterConfig
	for _, template := range kc.Spec.Cassandra.Datacenters {
		config := cassandra.Coalesce(kc.CassClusterName(), kc.Spec.Cassandra.DeepCopy(), template.DeepCopy())
		config.ExternalSecrets = kc.Spec.UseExternalSecrets()
		config.SuperuserSecretRef.Name = k8ssandractrl.SuperuserSecretName(kc)
		if err := cassandra.HandleEncryptionOptions(config); err != nil {
			return nil, err
		}
		cassandra.ApplyAuth(config, kc.Spec.IsAuthEnabled(), kc.Spec.UseExternalSecrets())
		if kc.Spec.Cassandra.ServerType.IsCassandra() && len(configs) == 0 {
			cassandra.ApplySystemReplication(config, replication)
		}
		if kc.Spec.Cassandra.ServerType.IsCassandra() && config.ServerVersion.Major() != 3 {
			cassandra.AllowAlterRfDuringRangeMovement(config)
		}
		if kc.Spec.Cassandra.Telemetry.IsMcacEnabled() {
			telemetry.InjectCassandraTelemetryFilters(kc.Spec.Cassandra.Telemetry, config)
		}
		cassandra.AddNumTokens(config)
		cassandra.AddStartRpc(config)
		cassandra.HandleDeprecatedJvmOptions(&config.CassandraConfig.JvmOptions)
		cassandra.EnableSmartTokenAllocation(config)
		if err := cassandra.ValidateDatacenterConfig(config); err != nil {
			return nil, err
		}
		configs = append(configs, config)
	}
	// The reconciler only logs this (e.g. num_tokens >= 16 leaves token allocation to Cassandra).
	if err := cassandra.ComputeInitialTokens(configs); err != nil {
		fmt.Fprintf(os.Stderr, "k8ssandra-dc: no initial tokens (as the operator): %v\n", err)
	}
	return configs, nil
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "k8ssandra-dc: %v\n", err)
	os.Exit(1)
}
