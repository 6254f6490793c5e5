package cloudconfig

// SetDefaults fills what c leaves unset.
func SetDefaults(c *CloudConfiguration) {
	if c.APIVersion == "" {
		c.APIVersion = APIVersion
	}
	if c.Kind == "" {
		c.Kind = Kind
	}
	for i := range c.Machines {
		m := &c.Machines[i]
		if m.ProviderID == "" {
			m.ProviderID = DefaultProviderIDScheme + m.Name
		}
	}
}
