# Makes the patched kubelet set a pod's cgroup up before the soft
# admission stage, as a series that did not hide held pods from the pod
# cgroup set-up would: test/e2e_node/check-cgroup-hiding.sh applies it to a
# scratch copy of pkg/kubelet/kubelet.go.
/^\t\/\/ Admit a pod whose admission was deferred to its worker; nothing is set$/i\
\t// check-cgroup-hiding.sh: the pod's cgroup, before the soft stage.\
\tif pcm := kl.containerManager.NewPodContainerManager(); !pcm.Exists(pod) {\
\t\t_ = pcm.EnsureExists(klog.FromContext(ctx), pod)\
\t}\

