//! Talking to the Kubernetes API: a client from a kubeconfig, and the API of any kind by name.

use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use kube::Client;

use crate::error::K8sError;

/// The API of any kind by its `apiVersion` and `kind`, in a namespace or (`None`) cluster-wide.
pub fn dynamic_api(
    client: &Client,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
    match namespace {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

/// A client from a kubeconfig file, or from the usual places (`KUBECONFIG`, ~/.kube/config, in-cluster).
pub async fn client(kubeconfig: Option<&std::path::Path>) -> Result<Client, K8sError> {
    let config = match kubeconfig {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path).map_err(|e| {
                K8sError::Kube(format!("reading kubeconfig {}: {e}", path.display()))
            })?;
            kube::Config::from_custom_kubeconfig(file, &kube::config::KubeConfigOptions::default())
                .await
                .map_err(|e| K8sError::Kube(format!("kubeconfig {}: {e}", path.display())))?
        }
        None => kube::Config::infer()
            .await
            .map_err(|e| K8sError::Kube(format!("no Kubernetes configuration: {e}")))?,
    };
    let url = config.cluster_url.to_string();
    let client =
        Client::try_from(config).map_err(|e| K8sError::Kube(format!("Kubernetes client: {e}")))?;
    // Before anything is written or applied: a cluster that does not answer is one line, naming it.
    client.apiserver_version().await.map_err(|e| {
        K8sError::kube(
            &format!("the Kubernetes API server at {url} does not answer"),
            &e,
        )
    })?;
    Ok(client)
}
