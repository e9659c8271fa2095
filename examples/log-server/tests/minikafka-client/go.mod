module logserver/minikafkaclient

go 1.18
